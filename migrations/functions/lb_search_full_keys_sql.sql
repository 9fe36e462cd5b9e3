-- lb_search_full_keys_sql: the statement of lb_search_full_keys, from the
-- GIN index (a bitmap scan: the index's matches, then their rows until
-- p_limit are found). The Domain and branch are compared as bigint so the
-- GIN index is scanned for the words alone (as in lb_search_or_sql); other
-- Domains' Records of the partition the words find are dropped by the
-- filter.
CREATE OR REPLACE FUNCTION lb_search_full_keys_sql(d integer, b integer, q tsquery, p_limit integer)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT coalesce(array_agg(x.key), '{}') FROM (SELECT m.key::text AS key FROM mat_records m
  WHERE m.domain_id = %L::bigint AND m.branch_id = %L::bigint AND NOT m.deleted AND m.search @@ %L::tsquery
  LIMIT %s) x$q$, d, b, q::text, p_limit)
$function$;
