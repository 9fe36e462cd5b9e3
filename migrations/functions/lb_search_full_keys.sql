-- lb_search_full_keys: the first p_limit present Records of branch b at
-- its head matching q (lb_search_full_keys_sql), whatever their rank, with
-- their scores (ts_rank of p_rank). lb_search asks for one more than it
-- may rank to learn whether it has them all. Index scans are off: the GIN
-- index's bitmap, never a walk of the primary key filtering every Record.
--
-- With p_index (q without its most common term) the GIN index reads
-- p_index alone and each of its Records is checked against q: the AND of
-- a common word's posting list decodes the whole list (at 10M steel's
-- 3,745,590 Records: 15 ms for the ten Records holding rail, steel and
-- ltd, against 2 ms for the 140 holding rail and ltd, checked for steel).
-- At most p_cap such Records are read; past them the GIN index reads q
-- whole. Both read the Records in the order of their rows (a bitmap), so
-- the first p_limit matches are the same either way.
CREATE OR REPLACE FUNCTION lb_search_full_keys(d integer, b integer, q tsquery, p_rank tsquery, p_limit integer, p_index tsquery DEFAULT NULL::tsquery, p_cap integer DEFAULT NULL::integer, OUT keys text[], OUT scores real[])
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET enable_indexscan TO 'off'
AS $function$
DECLARE
    seen bigint;
BEGIN
    IF p_index IS NOT NULL AND p_cap IS NOT NULL AND p_cap > 0 THEN
        EXECUTE lb_search_full_keys_sql(d, b, q, p_rank, p_limit, p_index, p_cap) INTO keys, scores, seen;
        IF seen <= p_cap THEN
            RETURN;
        END IF;
    END IF;
    EXECUTE lb_search_full_keys_sql(d, b, q, p_rank, p_limit) INTO keys, scores;
END
$function$;
