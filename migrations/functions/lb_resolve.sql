-- lb_resolve: entity resolution of a mention (lb_resolve_sql), its
-- search and per-candidate checks without parallel workers (as lb_search).
CREATE OR REPLACE FUNCTION lb_resolve(p_branch text, p_mention text, p_kind text, p_limit integer, p_candidates integer DEFAULT 1000, p_partial_candidates integer DEFAULT 100)
 RETURNS TABLE(key text, kind text, title text, score real, reason text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
 SET enable_seqscan TO 'off'
 SET max_parallel_workers_per_gather TO '0'
AS $function$
BEGIN
    RETURN QUERY EXECUTE lb_resolve_sql(p_branch, p_mention, p_kind, p_limit, p_candidates, p_partial_candidates);
END
$function$;
