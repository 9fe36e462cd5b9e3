-- lb_search_pair_top: every Record of branch b of Domain d holding word
-- p_x at a score of at least p_min (its best plateaus, a range of the rank
-- index) and word p_y, with the sum of its two postings scores (p_x's
-- first), by one probe of p_y's posting per Record (primary key). The
-- statement is planned with the Domain as a constant, so both sides read
-- the Domain's partition alone, not each probe pruning the partitions
-- anew (lb_search_pair_top_sql).
CREATE OR REPLACE FUNCTION lb_search_pair_top(d integer, b integer, p_x text, p_min real, p_y text, OUT keys text[], OUT sums double precision[])
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_mergejoin TO 'off'
 SET enable_hashjoin TO 'off'
AS $function$
BEGIN
    EXECUTE lb_search_pair_top_sql(d, b, p_x, p_min, p_y)
      INTO keys, sums;
END
$function$;
