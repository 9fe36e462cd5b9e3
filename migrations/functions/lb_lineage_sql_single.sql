CREATE OR REPLACE FUNCTION lb_lineage_sql_single(p_branch text, p_key text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    d int;
    b int;
    h bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    RETURN format($q$SELECT m.key::text, m.kind::text, m.versions,
       cr.id, cr.author, cr.at, coalesce(ch.provenance, cr.provenance),
       (SELECT coalesce(jsonb_object_agg(l.attr, jsonb_build_object(
                   'value', m.values -> l.attr,
                   'revision', r.id, 'seq', r.seq, 'author', r.author, 'at', r.at,
                   'provenance', coalesce(hh.provenance, r.provenance))), '{}'::jsonb)
          FROM jsonb_each_text(m.lineage) l(attr, s)
          LEFT JOIN revisions r ON r.domain_id = %1$L AND r.seq = l.s::bigint
          LEFT JOIN mat_history hh ON hh.domain_id = %1$L AND hh.branch_id = %2$L
                                  AND hh.key = m.key AND hh.seq = l.s::bigint)
  FROM mat_records m
  LEFT JOIN revisions cr ON cr.domain_id = %1$L AND cr.seq = m.created_seq
  LEFT JOIN mat_history ch ON ch.domain_id = %1$L AND ch.branch_id = %2$L AND ch.key = m.key AND ch.seq = m.created_seq
 WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = %3$L AND NOT m.deleted$q$, d, b, p_key);
END
$function$;
