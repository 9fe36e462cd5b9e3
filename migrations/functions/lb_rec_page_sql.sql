-- lb_rec_page_sql: the keyset page statement over candidates cands:
-- effective present Records passing fin, in key order, each once.
CREATE OR REPLACE FUNCTION lb_rec_page_sql(d integer, bs integer[], cs bigint[], hs bigint[], cands text, fin text, p_limit integer)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT DISTINCT ON (x.ord) x.key, x.kind, x.title, x."values", x.id FROM (
  SELECT c.key AS ord, e.key::text AS key, e.kind::text AS kind, e.title, e."values",
         (SELECT rv.id FROM revisions rv WHERE rv.domain_id = %1$L AND rv.seq = e.seq) AS id
    FROM %2$s c
   CROSS JOIN LATERAL %3$s e
   WHERE e.present%4$s
   ORDER BY c.key
   LIMIT %5$s) x
 ORDER BY x.ord
 LIMIT %6$s$q$, d, cands, lb_rec_eff_levels_sql(d, bs, lb_level_cuts(cs, hs), 'c.key'), fin, p_limit * 2 * cardinality(bs), p_limit)
$function$;
