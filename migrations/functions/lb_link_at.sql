-- lb_link_at is lb_record_at for the Link (f, rel, t).
CREATE OR REPLACE FUNCTION lb_link_at(d integer, bs integer[], cuts bigint[], f text, rel text, t text)
 RETURNS TABLE(present boolean, from_key text, relation text, to_key text, origin "char")
 LANGUAGE sql
 STABLE
AS $function$
SELECT s.*
  FROM unnest(bs, cuts) WITH ORDINALITY l(b, c, lvl)
 CROSS JOIN LATERAL lb_link_say(d, l.b, l.c, f, rel, t) s
 ORDER BY l.lvl LIMIT 1
$function$;
