-- lb_record_say is the rule of which row counts at a cut, for Records: the
-- say of one level (branch b read as of seq c) about the Record of key k.
-- The level has a say when its mat_records row is at or before the cut
-- (cur: that row, a tombstone being absent), or when its newest mat_history
-- row at or before the cut exists (that version, a delete being absent);
-- otherwise there is no row and the level below decides. A level read at
-- or past its head gets the largest cut (lb_level_cuts) and takes its rows
-- as they are.
--
-- Every multi-level read (lb_levels_stmt, lb_rec_say_sql) and the branch
-- copy job (jobs/materialize.go) apply the rule through this function;
-- the plain-SQL get at the head of an overlay (reads/get.go) writes it out
-- for its two levels, and TestGetAnswersAsLbGet holds it to lb_get. It
-- is a plain SQL function (no SECURITY DEFINER, no SET), so the planner
-- inlines it into the caller's statement. search is the row's when cur.
CREATE OR REPLACE FUNCTION lb_record_say(d integer, b integer, c bigint, k text)
 RETURNS TABLE(cur boolean, present boolean, key text, kind text, title text, "values" jsonb, seq bigint, search tsvector, lineage jsonb, created_seq bigint, versions integer)
 LANGUAGE sql
 STABLE
AS $function$
SELECT r.seq <= c,
       CASE WHEN r.seq <= c THEN NOT r.deleted ELSE h.op <> 'delete' END,
       r.key,
       CASE WHEN r.seq <= c THEN r.kind ELSE h.kind END,
       CASE WHEN r.seq <= c THEN r.title ELSE h.title END,
       CASE WHEN r.seq <= c THEN r."values" ELSE h."values" END,
       CASE WHEN r.seq <= c THEN r.seq ELSE h.seq END,
       CASE WHEN r.seq <= c THEN r.search END,
       r.lineage, r.created_seq, r.versions
  FROM mat_records r
  LEFT JOIN LATERAL (SELECT h.op, h.kind, h.title, h."values", h.seq FROM mat_history h
         WHERE r.seq > c AND h.domain_id = d AND h.branch_id = b AND h.key = r.key AND h.seq <= c
         ORDER BY h.seq DESC LIMIT 1) h ON true
 WHERE r.domain_id = d AND r.branch_id = b AND r.key = k COLLATE "C" AND (r.seq <= c OR h.seq IS NOT NULL)
$function$;
