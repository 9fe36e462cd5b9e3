-- lb_link_say_sql / lb_link_eff_sql: the same for the Link
-- (f, rel, t): columns lvl, present, from_key, relation, to_key, origin.
CREATE OR REPLACE FUNCTION lb_link_say_sql(d integer, lvl integer, b integer, c bigint, full_head boolean, f text, rel text, t text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT CASE WHEN full_head THEN format($q$SELECT %3$s AS lvl, NOT sr.deleted AS present, sr.from_key, sr.relation, sr.to_key, sr.origin
  FROM mat_links sr
 WHERE sr.domain_id = %1$L AND sr.branch_id = %2$L AND sr.from_key = %4$s AND sr.relation = %5$s AND sr.to_key = %6$s$q$,
    d, b, lvl, f, rel, t)
ELSE format($q$SELECT %3$s AS lvl, CASE WHEN sr.seq <= %4$L THEN NOT sr.deleted ELSE sh.op = 'link' END AS present,
       sr.from_key, sr.relation, sr.to_key, CASE WHEN sr.seq <= %4$L THEN sr.origin ELSE sh.origin END AS origin
  FROM mat_links sr
  LEFT JOIN LATERAL (SELECT sh.op, sh.origin FROM mat_link_history sh
         WHERE sr.seq > %4$L AND sh.domain_id = %1$L AND sh.branch_id = %2$L AND sh.from_key = sr.from_key
           AND sh.relation = sr.relation AND sh.to_key = sr.to_key AND sh.seq <= %4$L
         ORDER BY sh.seq DESC LIMIT 1) sh ON true
 WHERE sr.domain_id = %1$L AND sr.branch_id = %2$L AND sr.from_key = %5$s AND sr.relation = %6$s AND sr.to_key = %7$s
   AND (sr.seq <= %4$L OR sh.op IS NOT NULL)$q$, d, b, lvl, c, f, rel, t)
END
$function$;
