-- lb_rec_say_sql: the say of one level (lvl, branch b, cut c) about the
-- Record of key expression k, as statement text over lb_record_say: at
-- most one row (no row: no say). full: the cut is at or past the branch's
-- head, so every row of b is at or before it (the largest cut).
CREATE OR REPLACE FUNCTION lb_rec_say_sql(d integer, lvl integer, b integer, c bigint, full_head boolean, k text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT %3$s AS lvl, %2$L::int AS branch_id, s.cur, s.present, s.key COLLATE "C" AS key, s.kind COLLATE "C" AS kind,
       s.title, s."values", s.seq, s.search, s.lineage, s.created_seq, s.versions
  FROM lb_record_say(%1$L, %2$L, %4$L, %5$s) s$q$,
    d, b, lvl, CASE WHEN full_head THEN 9223372036854775807 ELSE c END, k)
$function$;
