-- lb_link_say_sql / lb_link_eff_sql: the same for the Link
-- (f, rel, t) over lb_link_say: columns lvl, present, from_key, relation,
-- to_key, origin.
CREATE OR REPLACE FUNCTION lb_link_say_sql(d integer, lvl integer, b integer, c bigint, full_head boolean, f text, rel text, t text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT %3$s AS lvl, s.present, s.from_key COLLATE "C" AS from_key, s.relation COLLATE "C" AS relation,
       s.to_key COLLATE "C" AS to_key, s.origin
  FROM lb_link_say(%1$L, %2$L, %4$L, %5$s, %6$s, %7$s) s$q$,
    d, b, lvl, CASE WHEN full_head THEN 9223372036854775807 ELSE c END, f, rel, t)
$function$;
