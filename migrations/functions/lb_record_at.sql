-- lb_record_at is the effective Record of key k over the levels (branch ids
-- bs, cuts from lb_level_cuts): the say (lb_record_say) of the first level
-- that has one. No row: no level has a say; present false: absent.
CREATE OR REPLACE FUNCTION lb_record_at(d integer, bs integer[], cuts bigint[], k text)
 RETURNS TABLE(cur boolean, present boolean, key text, kind text, title text, "values" jsonb, seq bigint, search tsvector, lineage jsonb, created_seq bigint, versions integer)
 LANGUAGE sql
 STABLE
AS $function$
SELECT s.*
  FROM unnest(bs, cuts) WITH ORDINALITY l(b, c, lvl)
 CROSS JOIN LATERAL lb_record_say(d, l.b, l.c, k) s
 ORDER BY l.lvl LIMIT 1
$function$;
