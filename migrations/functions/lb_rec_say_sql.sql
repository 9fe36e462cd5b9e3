-- lb_rec_say_sql: the say of one level (lvl, branch b, cut c) about the
-- Record of key expression k: at most one row (no row: no say). full: the
-- cut is at or past the branch's head, so every row of b is at or before it.
CREATE OR REPLACE FUNCTION lb_rec_say_sql(d integer, lvl integer, b integer, c bigint, full_head boolean, k text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT CASE WHEN full_head THEN format($q$SELECT %3$s AS lvl, %2$L::int AS branch_id, true AS cur, NOT sr.deleted AS present,
       sr.key, sr.kind, sr.title, sr."values", sr.seq, sr.search, sr.lineage, sr.created_seq, sr.versions
  FROM mat_records sr
 WHERE sr.domain_id = %1$L AND sr.branch_id = %2$L AND sr.key = %4$s$q$, d, b, lvl, k)
ELSE format($q$SELECT %3$s AS lvl, %2$L::int AS branch_id, sr.seq <= %4$L AS cur,
       CASE WHEN sr.seq <= %4$L THEN NOT sr.deleted ELSE sh.op <> 'delete' END AS present,
       sr.key,
       CASE WHEN sr.seq <= %4$L THEN sr.kind ELSE sh.kind END AS kind,
       CASE WHEN sr.seq <= %4$L THEN sr.title ELSE sh.title END AS title,
       CASE WHEN sr.seq <= %4$L THEN sr."values" ELSE sh."values" END AS "values",
       CASE WHEN sr.seq <= %4$L THEN sr.seq ELSE sh.seq END AS seq,
       CASE WHEN sr.seq <= %4$L THEN sr.search END AS search,
       sr.lineage, sr.created_seq, sr.versions
  FROM mat_records sr
  LEFT JOIN LATERAL (SELECT sh.op, sh.kind, sh.title, sh."values", sh.seq FROM mat_history sh
         WHERE sr.seq > %4$L AND sh.domain_id = %1$L AND sh.branch_id = %2$L AND sh.key = sr.key AND sh.seq <= %4$L
         ORDER BY sh.seq DESC LIMIT 1) sh ON true
 WHERE sr.domain_id = %1$L AND sr.branch_id = %2$L AND sr.key = %5$s AND (sr.seq <= %4$L OR sh.seq IS NOT NULL)$q$,
    d, b, lvl, c, k)
END
$function$;
