-- lb_search_triple_rows: lb_search_triple_rows_sql run from the GIN index
-- of the plateaus' tokens alone (sequential and plain index scans off, and
-- serially, as lb_search plans: at 10M, called with parallel workers
-- allowed, its statements took parallel plans, 534 ms for the 15 calls of
-- one search against 33, docs/perf/partial-10m-1205.txt):
-- the Records holding the words p_w[p_x[i]] at scores p_xs[i] (one plateau
-- of one word, or the meeting of two plateaus) and the other words, with
-- their sums, read from their heap rows rather than by the index's AND with
-- the other words' tokens; seen is how many rows the tokens found (at most
-- p_cap + 1 with p_cap: past p_cap, keys may miss some).
CREATE OR REPLACE FUNCTION lb_search_triple_rows(d integer, b integer, p_w text[], p_x integer[], p_xs real[], p_cap integer DEFAULT NULL::integer, OUT keys text[], OUT sums double precision[], OUT seen integer)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET enable_indexscan TO 'off'
 SET max_parallel_workers_per_gather TO '0'
AS $function$
BEGIN
    IF cardinality(p_w) <> 3 OR cardinality(p_x) NOT IN (1, 2) OR cardinality(p_xs) <> cardinality(p_x)
       OR EXISTS (SELECT 1 FROM unnest(p_x) x WHERE x IS NULL OR x NOT BETWEEN 1 AND 3)
       OR cardinality(p_x) = 2 AND p_x[1] = p_x[2] OR p_cap < 0 THEN
        RAISE EXCEPTION 'lb_search_triple_rows: % words, plateaus of words %, % scores, cap %',
              cardinality(p_w), p_x, cardinality(p_xs), p_cap USING ERRCODE = '22023';
    END IF;
    EXECUTE lb_search_triple_rows_sql(d, b, p_w, p_x, p_xs, p_cap) INTO keys, sums, seen;
END
$function$;
