-- lb_rec_overlay_page_stmt: the keyset page statement of an overlay read at
-- its head (level 1 of bs) over its base (level 2, read as of the fork
-- cs[2]): present Records of Kind p_kind ('' or NULL: every Kind) and,
-- with p_attribute, whose Attribute equals the SQL expression v, greater
-- than the SQL expression a, in key order. lb_rec_overlay_page_sql passes
-- the parameters $1 and $2 (lb_rec_prepared), so the text depends on the
-- Domain, the levels, the fork, whether the base moved on after it, the
-- Kind, the Attribute (and whether the base's index of it is ready) and
-- the limit, not on the value or the page's start. Three disjoint arms,
-- each in key order, merged: the base's rows (its per-Attribute index range (value, key), its Kind index or its
-- primary key) that the overlay has no row of and that stand for their
-- version at the fork; the overlay's own present rows; and, when the base
-- moved on after the fork, the other keys it changed since, that the
-- overlay has no row of, as their history version at the fork (sorted by
-- key, then read key by key, the overlay's row probed with each, only as
-- far as the page reaches; a key whose current row shows that its version
-- at the fork was of another Kind or held another value of the Attribute
-- is not read: lb_rec_kept_sql).
--
-- Which rows stand for their version at the fork: when the listing does
-- not name an Attribute, or names one the base's index holds in ivals, a
-- row whose iseq is not past the fork (its Kind, indexed values, deletion
-- and creation as they were then: migrations/0023_record_iseq), read as
-- its history version at the fork when it changed after it (seq past it:
-- other Attributes changed), and the third arm reads the keys whose iseq
-- is past the fork (mat_records_iseq_idx), not every key changed after it.
-- Otherwise (an Attribute read from values) a row that did not change
-- after the fork, and the third arm reads every key changed after it (the
-- history past the fork, mat_history_seq_idx, each key once).
-- No key comes twice, so the merge stops after p_limit rows.
CREATE OR REPLACE FUNCTION lb_rec_overlay_page_stmt(d integer, bs integer[], cs bigint[], hs bigint[], p_kind text, p_attribute text, v text, a text, p_limit integer)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
AS $function$
DECLARE
    pm text := '';
    pb text := '';
    px text := '';
    moved boolean := cs[2] < hs[2];
    byi boolean;
    arm1 text;
    ck text;
    eb text;
BEGIN
    IF coalesce(p_kind, '') <> '' THEN
        pm := format(' AND m.kind = %L', p_kind);
        pb := pm;
        px := format(' AND x.kind = %L', p_kind);
        IF coalesce(p_attribute, '') <> '' THEN
            -- Each level's rows by its own index form (lb_attr_expr).
            pm := pm || format(' AND %s = %s', lb_attr_expr(d, ARRAY[bs[1]], p_kind, p_attribute, 'm'), v);
            eb := lb_attr_expr(d, ARRAY[bs[2]], p_kind, p_attribute, 'm');
            pb := pb || format(' AND %s = %s', eb, v);
            px := px || format(' AND (x."values" ->> %L) = %s', p_attribute, v);
        END IF;
    END IF;
    byi := moved AND (coalesce(p_kind, '') = '' OR coalesce(p_attribute, '') = ''
                      OR eb LIKE '(m.ivals %');
    IF byi THEN
        arm1 := format($a$SELECT m.key, m.kind, m.title, CASE WHEN m.seq > %4$L THEN x."values" ELSE m."values" END,
                CASE WHEN m.seq > %4$L THEN x.seq ELSE m.seq END
           FROM mat_records m
           LEFT JOIN LATERAL (SELECT h."values", h.seq FROM mat_history h
                   WHERE h.domain_id = %1$L AND h.branch_id = %3$L AND h.key = m.key AND h.seq <= %4$L AND m.seq > %4$L
                   ORDER BY h.seq DESC LIMIT 1) x ON true
          WHERE m.domain_id = %1$L AND m.branch_id = %3$L%5$s AND m.key > %6$s AND NOT m.deleted AND m.iseq <= %4$L
            AND NOT EXISTS (SELECT 1 FROM mat_records u WHERE u.domain_id = %1$L AND u.branch_id = %2$L AND u.key = m.key)
          ORDER BY m.key LIMIT %7$s$a$,
            d, bs[1], bs[2], cs[2], pb, a, p_limit);
        ck := format($c$SELECT c.key FROM mat_records c
                          WHERE c.domain_id = %1$L AND c.branch_id = %2$L AND c.iseq > %3$L AND c.key > %4$s$c$,
                     d, bs[2], cs[2], a);
    ELSE
        arm1 := format($a$SELECT m.key, m.kind, m.title, m."values", m.seq FROM mat_records m
          WHERE m.domain_id = %1$L AND m.branch_id = %3$L%4$s AND m.key > %5$s AND NOT m.deleted%6$s
            AND NOT EXISTS (SELECT 1 FROM mat_records u WHERE u.domain_id = %1$L AND u.branch_id = %2$L AND u.key = m.key)
          ORDER BY m.key LIMIT %7$s$a$,
            d, bs[1], bs[2], pb, a, CASE WHEN moved THEN format(' AND m.seq <= %L', cs[2]) ELSE '' END, p_limit);
        ck := format($c$SELECT DISTINCT c.key FROM mat_history c
                          WHERE c.domain_id = %1$L AND c.branch_id = %2$L AND c.seq > %3$L AND c.key > %4$s$c$,
                     d, bs[2], cs[2], a);
    END IF;
    RETURN format($q$SELECT z.key::text, z.kind::text, z.title, z."values",
       (SELECT rv.id FROM revisions rv WHERE rv.domain_id = %1$L AND rv.seq = z.seq) AS id
  FROM ((%3$s)
        UNION ALL
        (SELECT m.key, m.kind, m.title, m."values", m.seq FROM mat_records m
          WHERE m.domain_id = %1$L AND m.branch_id = %2$L%4$s AND m.key > %5$s AND NOT m.deleted
          ORDER BY m.key LIMIT %6$s)%7$s) z
 ORDER BY z.key
 LIMIT %6$s$q$,
        d, bs[1], arm1, pm, a, p_limit,
        CASE WHEN moved THEN format($u$
        UNION ALL
        (SELECT cb.key, x.kind, x.title, x."values", x.seq
           FROM (SELECT cb.key
                   FROM (%9$s) ck
                  CROSS JOIN LATERAL (SELECT cb.* FROM mat_records cb
                          WHERE cb.domain_id = %1$L AND cb.branch_id = %3$L AND cb.key = ck.key LIMIT 1) cb
                  WHERE NOT coalesce(%8$s, false)
                  ORDER BY cb.key) cb
          CROSS JOIN LATERAL (SELECT h.key, h.kind, h.title, h."values", h.seq, h.op FROM mat_history h
                  WHERE h.domain_id = %1$L AND h.branch_id = %3$L AND h.key = cb.key AND h.seq <= %5$L
                    AND NOT EXISTS (SELECT 1 FROM mat_records u WHERE u.domain_id = %1$L AND u.branch_id = %2$L AND u.key = cb.key)
                  ORDER BY h.seq DESC LIMIT 1) x
          WHERE x.op <> 'delete'%6$s
          ORDER BY cb.key LIMIT %7$s)$u$,
            d, bs[1], bs[2], a, cs[2], px, p_limit,
            -- The current row tells, without the history, that the version
            -- at the fork is of another Kind, or holds another value.
            CASE WHEN coalesce(p_kind, '') = '' THEN 'false'
                 ELSE format('(%s AND cb.kind <> %L)', lb_rec_kept_sql(d, bs[2], cs[2], 'cb', 'kind'), p_kind)
                      || CASE WHEN coalesce(p_attribute, '') = '' THEN ''
                              ELSE format(' OR (%s AND (cb."values" ->> %L) IS DISTINCT FROM %s)',
                                          lb_rec_kept_sql(d, bs[2], cs[2], 'cb', 'attribute', p_attribute), p_attribute, v) END
            END, ck) ELSE '' END);
END
$function$;
