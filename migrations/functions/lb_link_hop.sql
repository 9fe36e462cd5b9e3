-- lb_link_hop is the effective Links of the Record k over the levels:
-- outgoing unless dir is 'in', incoming unless dir is 'out', of Relation
-- rel ('' for every Relation), at most fanout per direction (NULL: all),
-- each direction by (relation, other key). other is the Link's other end.
-- A candidate is any Link a level holds (or held after its cut); its
-- effective state decides (lb_link_at).
CREATE OR REPLACE FUNCTION lb_link_hop(d integer, bs integer[], cuts bigint[], k text, dir text, rel text, fanout integer)
 RETURNS TABLE(relation text, from_key text, to_key text, origin "char", other text)
 LANGUAGE sql
 STABLE
AS $function$
(SELECT z.relation, z.from_key, z.to_key, z.origin, z.to_key
   FROM (SELECT DISTINCT o.relation, o.to_key AS other
           FROM unnest(bs, cuts) WITH ORDINALITY l(b, c, lvl)
           JOIN mat_links o ON o.domain_id = d AND o.branch_id = l.b AND o.from_key = k COLLATE "C"
            AND (NOT o.deleted OR o.seq > l.c)
          WHERE dir <> 'in' AND (rel = '' OR o.relation = rel COLLATE "C")) x
  CROSS JOIN LATERAL lb_link_at(d, bs, cuts, k, x.relation, x.other) z
  WHERE z.present ORDER BY x.relation, x.other LIMIT fanout)
UNION ALL
(SELECT z.relation, z.from_key, z.to_key, z.origin, z.from_key
   FROM (SELECT DISTINCT o.relation, o.from_key AS other
           FROM unnest(bs, cuts) WITH ORDINALITY l(b, c, lvl)
           JOIN mat_links o ON o.domain_id = d AND o.branch_id = l.b AND o.to_key = k COLLATE "C"
            AND (NOT o.deleted OR o.seq > l.c)
          WHERE dir <> 'out' AND (rel = '' OR o.relation = rel COLLATE "C")) x
  CROSS JOIN LATERAL lb_link_at(d, bs, cuts, x.other, x.relation, k) z
  WHERE z.present ORDER BY x.relation, x.other LIMIT fanout)
$function$;
