-- lb_search_full_keys: the keys of the first p_limit present Records of
-- branch b at its head matching q, from the GIN index (a bitmap scan: the
-- index's matches, then their rows until p_limit are found), whatever
-- their rank. lb_search asks for one more than its limit to learn whether
-- it has them all. The Domain and branch are compared as bigint so the GIN
-- index is scanned for the words alone (as in lb_search_or_sql); other
-- Domains' Records the words find are dropped by the filter.
CREATE OR REPLACE FUNCTION lb_search_full_keys(d integer, b integer, q tsquery, p_limit integer)
 RETURNS text[]
 LANGUAGE sql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET enable_indexscan TO 'off'
AS $function$
SELECT coalesce(array_agg(x.key), '{}')
  FROM (SELECT m.key::text AS key FROM mat_records m
         WHERE m.domain_id = d::bigint AND m.branch_id = b::bigint AND NOT m.deleted AND m.search @@ q
         LIMIT p_limit) x
$function$;
