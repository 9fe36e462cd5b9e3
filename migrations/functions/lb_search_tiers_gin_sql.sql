-- lb_search_tiers_gin_sql: the statement reading, for lb_search_tiers, the
-- present Records of branch b at its head matching q from the GIN index,
-- each scored from its search vector as its postings score it: the mask
-- of the terms of the words p_words (masks p_masks) it holds, and the sum
-- of ts_rank of each word it holds alone. The Domain and branch are
-- compared as bigint so the GIN index is scanned for the words alone (as
-- in lb_search_or_sql); other Domains' Records of the partition the words
-- find are dropped by the filter. It returns the keys, masks and sums.
CREATE OR REPLACE FUNCTION lb_search_tiers_gin_sql(d integer, b integer, p_words text[], p_masks integer[], q tsquery)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT coalesce(array_agg(x.key), '{}'), coalesce(array_agg(x.mask), '{}'), coalesce(array_agg(x.s), '{}') FROM (
  SELECT m.key::text AS key, %4$s AS mask, %5$s AS s FROM mat_records m
   WHERE m.domain_id = %1$L::bigint AND m.branch_id = %2$L::bigint AND NOT m.deleted AND m.search @@ %3$L::tsquery) x$q$,
    d, b, q::text,
    (SELECT string_agg(format('CASE WHEN m.search @@ %L::tsquery THEN %s ELSE 0 END', lb_lexeme(u.w), u.mask), ' | ')
       FROM unnest(p_words, p_masks) u(w, mask)),
    (SELECT string_agg(format('CASE WHEN m.search @@ %1$L::tsquery THEN ts_rank(m.search, %1$L::tsquery)::double precision ELSE 0 END', lb_lexeme(u.w)), ' + ')
       FROM unnest(p_words) u(w)))
$function$;
