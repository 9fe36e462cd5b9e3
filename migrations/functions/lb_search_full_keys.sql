-- lb_search_full_keys: the first p_limit present Records of branch b at
-- its head matching q (lb_search_full_keys_sql), whatever their rank, with
-- their scores (ts_rank of p_rank). lb_search asks for one more than it
-- may rank to learn whether it has them all. Index scans are off: the GIN
-- index's bitmap, never a walk of the primary key filtering every Record.
CREATE OR REPLACE FUNCTION lb_search_full_keys(d integer, b integer, q tsquery, p_rank tsquery, p_limit integer, OUT keys text[], OUT scores real[])
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET enable_indexscan TO 'off'
AS $function$
BEGIN
    EXECUTE lb_search_full_keys_sql(d, b, q, p_rank, p_limit) INTO keys, scores;
END
$function$;
