-- lb_semantic_source_levels: the effective Records of the levels as rows
-- (key, kind, title, values, seq), each at the version the read sees: per
-- level its present rows at or before its cut that no upper level has a say
-- about, and, when the level is read before its head, the keys it changed
-- after the cut as their history version at the cut. p_filter is a
-- condition on the row alias r (for the history part, x) added to each part.
CREATE OR REPLACE FUNCTION lb_semantic_source_levels(d integer, bs integer[], cs bigint[], hs bigint[], p_filter_r text, p_filter_x text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    s text := '';
    i int;
BEGIN
    FOR i IN 1..cardinality(bs) LOOP
        s := s || CASE WHEN i > 1 THEN E'\n UNION ALL\n' ELSE '' END
             || format($q$SELECT r.key, r.kind, r.title, r."values", r.seq FROM mat_records r
     WHERE r.domain_id = %1$L AND r.branch_id = %2$L AND NOT r.deleted%3$s%4$s%5$s$q$,
                       d, bs[i], CASE WHEN cs[i] < hs[i] THEN format(' AND r.seq <= %L', cs[i]) ELSE '' END,
                       lb_rec_upper_sql(d, bs, cs, hs, i, 'r.key'), p_filter_r);
        IF cs[i] < hs[i] THEN
            s := s || E'\n UNION ALL\n' || format($q$SELECT x.key, x.kind, x.title, x."values", x.seq
      FROM (%4$s) ck
     CROSS JOIN LATERAL (SELECT h.key, h.kind, h.title, h."values", h.op, h.seq FROM mat_history h
             WHERE h.domain_id = %1$L AND h.branch_id = %2$L AND h.key = ck.key AND h.seq <= %3$L
             ORDER BY h.seq DESC LIMIT 1) x
     WHERE x.op <> 'delete'%5$s%6$s$q$, d, bs[i], cs[i], lb_changed_sql(d, bs[i], cs[i], ''),
                       lb_rec_upper_sql(d, bs, cs, hs, i, 'x.key'), p_filter_x);
        END IF;
    END LOOP;
    RETURN s;
END
$function$;
