-- lb_search_overlay_own: the keys an overlay ov decides that match some of
-- terms (or_q: their OR), each as its effective version with its rank (as
-- lb_search_run ranks: full, ts_rank of or_q; partial, that rank times the
-- terms matched over the terms) and the number of terms it matches: the
-- overlay's own present rows (its GIN index) and, when its base moved on
-- after the fork, the base's changed keys that match
-- (lb_search_overlay_changed). Of Kind p_kind ('' or NULL: every Kind). A
-- SQL function the planner inlines: lb_search_overlay runs it as one
-- statement whose plan the session keeps.
CREATE OR REPLACE FUNCTION lb_search_overlay_own(d integer, ov integer, base integer, fork bigint, or_q tsquery, terms tsquery[], lexemes text[], katts jsonb, p_kind text)
 RETURNS TABLE(key text, kind text, title text, score real, matched integer)
 LANGUAGE sql
 STABLE
AS $function$
SELECT e.key::text, e.kind::text, e.title,
       CASE WHEN e.matched = cardinality(terms) THEN ts_rank(e.search, or_q)
            ELSE (ts_rank(e.search, or_q) * e.matched / cardinality(terms))::real END,
       e.matched
  FROM (SELECT v.key, v.kind, v.title, v.search,
               (SELECT count(*) FILTER (WHERE v.search @@ t)::int FROM unnest(terms) t) AS matched
          FROM (SELECT o.key, o.kind, o.title, o.search FROM mat_records o
                 WHERE o.domain_id = d AND o.branch_id = ov AND NOT o.deleted AND o.search @@ or_q
                   AND (coalesce(p_kind, '') = '' OR o.kind = p_kind)
                UNION ALL
                SELECT c.key, c.kind, c.title, c.search
                  FROM lb_search_overlay_changed(d, ov, base, fork, or_q, lexemes, katts, p_kind) c) v) e
$function$;
