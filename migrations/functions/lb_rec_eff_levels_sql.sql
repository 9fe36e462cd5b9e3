-- lb_rec_eff_levels_sql: the effective Record of key expression k over
-- the levels (cuts from lb_level_cuts) as a parenthesized subquery of at
-- most one row: present (false: absent), key, kind, title, values, seq.
CREATE OR REPLACE FUNCTION lb_rec_eff_levels_sql(d integer, bs integer[], cuts bigint[], k text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$(SELECT CASE WHEN r.seq <= l.c THEN NOT r.deleted ELSE h.op <> 'delete' END AS present,
               r.key,
               CASE WHEN r.seq <= l.c THEN r.kind ELSE h.kind END AS kind,
               CASE WHEN r.seq <= l.c THEN r.title ELSE h.title END AS title,
               CASE WHEN r.seq <= l.c THEN r."values" ELSE h."values" END AS "values",
               CASE WHEN r.seq <= l.c THEN r.seq ELSE h.seq END AS seq
          FROM unnest(%2$L::int[], %3$L::bigint[]) WITH ORDINALITY l(b, c, lvl)
          JOIN mat_records r ON r.domain_id = %1$L AND r.branch_id = l.b AND r.key = %4$s
          LEFT JOIN LATERAL (SELECT h.op, h.kind, h.title, h."values", h.seq FROM mat_history h
                 WHERE r.seq > l.c AND h.domain_id = %1$L AND h.branch_id = l.b AND h.key = r.key AND h.seq <= l.c
                 ORDER BY h.seq DESC LIMIT 1) h ON true
         WHERE r.seq <= l.c OR h.seq IS NOT NULL
         ORDER BY l.lvl LIMIT 1)$q$, d, bs, cuts, k)
$function$;
