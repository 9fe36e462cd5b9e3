-- lb_rec_meta_sql: lineage, created_seq and versions of the effective
-- Record e (a LATERAL subquery over e): e's own when it is a mat_records
-- row, else computed from the Record's history over the levels up to e's
-- version (since its last creation; an Attribute's seq is the last change
-- of its value).
CREATE OR REPLACE FUNCTION lb_rec_meta_sql(d integer, bs integer[], cs bigint[])
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    arms text := '';
    i int;
BEGIN
    FOR i IN 1..cardinality(bs) LOOP
        arms := arms || CASE WHEN i > 1 THEN ' UNION ALL ' ELSE '' END
             || format($q$SELECT %3$s AS lvl, h.seq, h.op, h."values" FROM mat_history h
              WHERE h.domain_id = %1$L AND h.branch_id = %2$L AND h.key = e.key AND h.seq <= least(%4$L::bigint, e.seq)$q$,
                       d, bs[i], i, cs[i]);
    END LOOP;
    RETURN format($q$(SELECT e.lineage, e.created_seq, e.versions WHERE e.cur
   UNION ALL
   SELECT * FROM (
    WITH hist AS (SELECT DISTINCT ON (u.seq) u.seq, u.op, u."values" FROM (%1$s) u ORDER BY u.seq, u.lvl),
    since AS (SELECT * FROM hist WHERE hist.seq > coalesce((SELECT max(x.seq) FROM hist x WHERE x.op = 'delete'), 0)),
    pairs AS (SELECT p.seq, p."values" AS v, lag(p."values") OVER (ORDER BY p.seq) AS prev FROM since p)
    SELECT (SELECT coalesce(jsonb_object_agg(z.a, z.s), '{}'::jsonb) FROM (
              SELECT a.a, max(p.seq) AS s FROM pairs p
               CROSS JOIN LATERAL (SELECT jsonb_object_keys(coalesce(p.v, '{}'::jsonb))
                                   UNION SELECT jsonb_object_keys(coalesce(p.prev, '{}'::jsonb))) a(a)
               WHERE p.prev IS NULL OR p.v -> a.a IS DISTINCT FROM p.prev -> a.a
               GROUP BY a.a) z),
           (SELECT min(since.seq) FROM since),
           (SELECT count(*) FROM hist)::int
     WHERE NOT e.cur) hm)$q$, arms);
END
$function$;
