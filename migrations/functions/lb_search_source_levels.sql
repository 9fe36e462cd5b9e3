-- lb_search_source_levels: the FROM clause of the search statements over
-- the levels. Per level: its present rows at or before its cut that no
-- upper level has a say about (GIN index), and, when the level is read
-- before its head, the keys it changed after the cut, as their history
-- version at the cut with the search vector computed as the commit does.
CREATE OR REPLACE FUNCTION lb_search_source_levels(d integer, bs integer[], cs bigint[], hs bigint[])
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
             || format($q$SELECT r.key, r.kind, r.title, r.search FROM mat_records r
     WHERE r.domain_id = %1$L AND r.branch_id = %2$L AND NOT r.deleted%3$s%4$s$q$,
                       d, bs[i], CASE WHEN cs[i] < hs[i] THEN format(' AND r.seq <= %L', cs[i]) ELSE '' END,
                       lb_rec_upper_sql(d, bs, cs, hs, i, 'r.key'));
        IF cs[i] < hs[i] THEN
            s := s || E'\n UNION ALL\n' || format($q$SELECT x.key, x.kind, x.title, %6$s AS search
      FROM (%4$s) ck
     CROSS JOIN LATERAL (SELECT h.key, h.kind, h.title, h."values", h.op FROM mat_history h
             WHERE h.domain_id = %1$L AND h.branch_id = %2$L AND h.key = ck.key AND h.seq <= %3$L
             ORDER BY h.seq DESC LIMIT 1) x
     WHERE x.op <> 'delete'%5$s$q$, d, bs[i], cs[i], lb_changed_sql(d, bs[i], cs[i], ''),
                       lb_rec_upper_sql(d, bs, cs, hs, i, 'x.key'), lb_search_vector_sql(d, bs[i]));
        END IF;
    END LOOP;
    RETURN format('FROM (%s) m WHERE true', s);
END
$function$;
