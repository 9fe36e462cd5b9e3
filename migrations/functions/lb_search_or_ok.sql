-- lb_search_or_ok: whether lb_search_or_sql may answer a one-term query
-- whose present words hold p_counts Records each: of every two words, one
-- is in fewer Records than 8 × p_candidates, so the GIN index finds the
-- Records holding both at small cost.
CREATE OR REPLACE FUNCTION lb_search_or_ok(p_counts bigint[], p_candidates integer)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT p_counts IS NOT NULL AND coalesce((SELECT bool_and(least(x.n, y.n) < 8::bigint * p_candidates)
                                   FROM unnest(p_counts) WITH ORDINALITY x(n, i), unnest(p_counts) WITH ORDINALITY y(n, j)
                                  WHERE x.i < y.j), true)
$function$;
