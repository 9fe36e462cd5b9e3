CREATE OR REPLACE FUNCTION lb_lineage_sql(p_branch text, p_key text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
    own int;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    IF c.single THEN
        RETURN lb_lineage_sql_single(p_branch, p_key);
    END IF;
    IF cardinality(c.bs) = 2 THEN
        -- An overlay over its base: the row that decides the Record, when
        -- it is the overlay's or the base's unchanged since the fork, holds
        -- its lineage; its history rows are on the branch of each
        -- Revision.
        SELECT x.b INTO own
          FROM (SELECT 1 AS o, m.branch_id AS b FROM mat_records m
                 WHERE m.domain_id = c.d AND m.branch_id = c.bs[1] AND m.key = p_key
                UNION ALL
                SELECT 2, m.branch_id FROM mat_records m
                 WHERE m.domain_id = c.d AND m.branch_id = c.bs[2] AND m.key = p_key AND m.seq <= c.cs[2]) x
         ORDER BY x.o LIMIT 1;
        IF own IS NOT NULL THEN
            RETURN format($q$SELECT m.key::text, m.kind::text, m.versions,
       cr.id, cr.author, cr.at, coalesce(ch.provenance, cr.provenance),
       (SELECT coalesce(jsonb_object_agg(l.attr, jsonb_build_object(
                   'value', m.values -> l.attr,
                   'revision', r.id, 'seq', r.seq, 'author', r.author, 'at', r.at,
                   'provenance', coalesce(hh.provenance, r.provenance))), '{}'::jsonb)
          FROM jsonb_each_text(m.lineage) l(attr, s)
          LEFT JOIN revisions r ON r.domain_id = %1$L AND r.seq = l.s::bigint
          LEFT JOIN mat_history hh ON hh.domain_id = %1$L AND hh.branch_id = r.branch_id
                                  AND hh.key = m.key AND hh.seq = l.s::bigint)
  FROM mat_records m
  LEFT JOIN revisions cr ON cr.domain_id = %1$L AND cr.seq = m.created_seq
  LEFT JOIN mat_history ch ON ch.domain_id = %1$L AND ch.branch_id = cr.branch_id AND ch.key = m.key AND ch.seq = m.created_seq
 WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = %3$L AND NOT m.deleted$q$, c.d, own, p_key);
        END IF;
    END IF;
    RETURN format($q$SELECT e.key::text, e.kind::text, m.versions,
       cr.id, cr.author, cr.at, coalesce(ch.provenance, cr.provenance),
       (SELECT coalesce(jsonb_object_agg(l.attr, jsonb_build_object(
                   'value', e."values" -> l.attr,
                   'revision', r.id, 'seq', r.seq, 'author', r.author, 'at', r.at,
                   'provenance', coalesce(hh.provenance, r.provenance))), '{}'::jsonb)
          FROM jsonb_each_text(m.lineage) l(attr, s)
          LEFT JOIN revisions r ON r.domain_id = %1$L AND r.seq = l.s::bigint
          LEFT JOIN mat_history hh ON hh.domain_id = %1$L AND hh.branch_id = r.branch_id
                                  AND hh.key = e.key AND hh.seq = l.s::bigint)
  FROM %2$s e
 CROSS JOIN LATERAL %3$s m(lineage, created_seq, versions)
  LEFT JOIN revisions cr ON cr.domain_id = %1$L AND cr.seq = m.created_seq
  LEFT JOIN mat_history ch ON ch.domain_id = %1$L AND ch.branch_id = cr.branch_id AND ch.key = e.key AND ch.seq = m.created_seq
 WHERE e.present$q$, c.d, lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, format('%L', p_key)), lb_rec_meta_sql(c.d, c.bs, c.cs));
END
$function$;
