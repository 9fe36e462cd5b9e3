-- lb_search_overlay_own: the keys an overlay ov decides that match some of
-- terms (or_q: their OR), each as its effective version with its rank (as
-- lb_search_run ranks: full, ts_rank of or_q; partial, that rank times the
-- terms matched over the terms) and the number of terms it matches: the
-- overlay's own present rows (its GIN index) and, when its base moved on
-- after the fork, the keys the base changed since (rows past fork,
-- mat_records_seq_idx) that the overlay has no row of and whose current
-- row does not stand for their version at the fork (katts, the base's
-- lb_rec_kept_attrs: the Kind's title or search Attributes changed after
-- it, or the Record was created or deleted after it), read as that
-- version from the history. A version is ranked only if one of lexemes
-- (the terms' words' lexemes) is in its lowered text. Of Kind p_kind
-- ('' or NULL: every Kind). A SQL function the planner inlines:
-- lb_search_overlay runs it as one statement whose plan the session keeps.
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
                SELECT m.key, x.kind, x.title, lb_search_vector(d, base, x.kind, x.title, x."values")
                  FROM mat_records m
                 CROSS JOIN LATERAL (SELECT h.kind, h.title, h."values", h.op FROM mat_history h
                         WHERE h.domain_id = d AND h.branch_id = base AND h.key = m.key AND h.seq <= fork
                         ORDER BY h.seq DESC LIMIT 1) x
                 WHERE m.domain_id = d AND m.branch_id = base AND m.seq > fork
                   AND NOT coalesce(m.created_seq <= fork AND NOT m.deleted
                                    AND CASE jsonb_array_length(katts -> m.kind::text)
                                        WHEN 1 THEN coalesce((m.lineage ->> (katts -> m.kind::text ->> 0))::numeric <= fork, false)
                                        ELSE (SELECT bool_and(coalesce((m.lineage ->> a.a)::numeric <= fork, false))
                                                FROM jsonb_array_elements_text(katts -> m.kind::text) a(a)) END, false)
                   AND NOT EXISTS (SELECT 1 FROM mat_records u WHERE u.domain_id = d AND u.branch_id = ov AND u.key = m.key)
                   AND x.op <> 'delete' AND (coalesce(p_kind, '') = '' OR x.kind = p_kind)
                   AND EXISTS (SELECT 1 FROM unnest(lexemes) l(l) WHERE strpos(lower(x.title || ' ' || x."values"::text), l.l) > 0)
                   AND lb_search_vector(d, base, x.kind, x.title, x."values") @@ or_q) v) e
$function$;
