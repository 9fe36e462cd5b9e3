-- lb_search_overlay_changed: when an overlay's base moved on after the
-- fork, the keys whose search the base changed since (its rows whose iseq
-- is past fork, mat_records_iseq_idx: their Kind, title, search vector,
-- indexed values, deletion or creation changed after it; a key changed
-- only in Attributes no index reads is not among them, its row stands for
-- its version at the fork) that the overlay ov has no row of, whose
-- current row does not stand for their version at the fork (katts, the
-- base's lb_rec_kept_attrs: the Kind's title or search Attributes changed
-- after it, or the Record was created or deleted after it; a filter of the
-- index range, before any history read) and whose version at the fork
-- (from the history) is present, of Kind p_kind ('' or NULL: every Kind)
-- and matches or_q, with its search vector. A version is tested only if
-- one of lexemes (the query's words' lexemes) is in its lowered text. A
-- SQL function the planner inlines (lb_search_overlay_own,
-- lb_search_overlay).
CREATE OR REPLACE FUNCTION lb_search_overlay_changed(d integer, ov integer, base integer, fork bigint, or_q tsquery, lexemes text[], katts jsonb, p_kind text)
 RETURNS TABLE(key text, kind text, title text, search tsvector)
 LANGUAGE sql
 STABLE
AS $function$
SELECT m.key, x.kind, x.title, lb_search_vector(d, base, x.kind, x.title, x."values")
  FROM mat_records m
 CROSS JOIN LATERAL (SELECT h.kind, h.title, h."values", h.op FROM mat_history h
         WHERE h.domain_id = d AND h.branch_id = base AND h.key = m.key AND h.seq <= fork
         ORDER BY h.seq DESC LIMIT 1) x
 WHERE m.domain_id = d AND m.branch_id = base AND m.iseq > fork
   AND NOT coalesce(m.created_seq <= fork AND NOT m.deleted
                    AND CASE jsonb_array_length(katts -> m.kind::text)
                        WHEN 1 THEN coalesce((m.lineage ->> (katts -> m.kind::text ->> 0))::numeric <= fork, false)
                        ELSE (SELECT bool_and(coalesce((m.lineage ->> a.a)::numeric <= fork, false))
                                FROM jsonb_array_elements_text(katts -> m.kind::text) a(a)) END, false)
   AND NOT EXISTS (SELECT 1 FROM mat_records u WHERE u.domain_id = d AND u.branch_id = ov AND u.key = m.key)
   AND x.op <> 'delete' AND (coalesce(p_kind, '') = '' OR x.kind = p_kind)
   AND EXISTS (SELECT 1 FROM unnest(lexemes) l(l) WHERE strpos(lower(x.title || ' ' || x."values"::text), l.l) > 0)
   AND lb_search_vector(d, base, x.kind, x.title, x."values") @@ or_q
$function$;
