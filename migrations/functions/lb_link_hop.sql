-- lb_link_hop is the effective Links of the Record k over the levels:
-- outgoing unless dir is 'in', incoming unless dir is 'out', of Relation
-- rel ('' for every Relation), at most fanout per direction (NULL: all),
-- each direction by (relation, other key). other is the Link's other end.
-- A candidate is any Link a level holds (or held after its cut); its
-- effective state decides (lb_link_at).
--
-- The upper levels (overlays, holding only their own changes) give all
-- their candidates; the bottom level's are read in index order and only
-- until fanout of them are present, so a Record with thousands of Links
-- reads about fanout of them, as on a single level. The first fanout of
-- the union are the first fanout present Links of every level: a present
-- Link is a candidate of the level that decides it, and a bottom-level
-- Link among the first fanout present is among the bottom level's first
-- fanout present candidates.
CREATE OR REPLACE FUNCTION lb_link_hop(d integer, bs integer[], cuts bigint[], k text, dir text, rel text, fanout integer)
 RETURNS TABLE(relation text, from_key text, to_key text, origin "char", other text)
 LANGUAGE sql
 STABLE
AS $function$
(SELECT y.relation, y.from_key, y.to_key, y.origin, y.to_key
   FROM ((SELECT z.relation, z.from_key, z.to_key, z.origin
            FROM (SELECT DISTINCT o.relation, o.to_key AS other
                    FROM unnest(bs[1:cardinality(bs) - 1], cuts[1:cardinality(bs) - 1]) l(b, c)
                    JOIN mat_links o ON o.domain_id = d AND o.branch_id = l.b AND o.from_key = k COLLATE "C"
                     AND (NOT o.deleted OR o.seq > l.c)
                   WHERE dir <> 'in' AND (rel = '' OR o.relation = rel COLLATE "C")) x
           CROSS JOIN LATERAL lb_link_at(d, bs, cuts, k, x.relation, x.other) z
           WHERE z.present ORDER BY x.relation, x.other LIMIT fanout)
         UNION
         (SELECT z.relation, z.from_key, z.to_key, z.origin
            FROM mat_links o
           CROSS JOIN LATERAL lb_link_at(d, bs, cuts, k, o.relation, o.to_key) z
           WHERE o.domain_id = d AND o.branch_id = bs[cardinality(bs)] AND o.from_key = k COLLATE "C"
             AND (NOT o.deleted OR o.seq > cuts[cardinality(bs)])
             AND dir <> 'in' AND (rel = '' OR o.relation = rel COLLATE "C") AND z.present
           ORDER BY o.relation, o.to_key LIMIT fanout)) y
  ORDER BY y.relation COLLATE "C", y.to_key COLLATE "C" LIMIT fanout)
UNION ALL
(SELECT y.relation, y.from_key, y.to_key, y.origin, y.from_key
   FROM ((SELECT z.relation, z.from_key, z.to_key, z.origin
            FROM (SELECT DISTINCT o.relation, o.from_key AS other
                    FROM unnest(bs[1:cardinality(bs) - 1], cuts[1:cardinality(bs) - 1]) l(b, c)
                    JOIN mat_links o ON o.domain_id = d AND o.branch_id = l.b AND o.to_key = k COLLATE "C"
                     AND (NOT o.deleted OR o.seq > l.c)
                   WHERE dir <> 'out' AND (rel = '' OR o.relation = rel COLLATE "C")) x
           CROSS JOIN LATERAL lb_link_at(d, bs, cuts, x.other, x.relation, k) z
           WHERE z.present ORDER BY x.relation, x.other LIMIT fanout)
         UNION
         (SELECT z.relation, z.from_key, z.to_key, z.origin
            FROM mat_links o
           CROSS JOIN LATERAL lb_link_at(d, bs, cuts, o.from_key, o.relation, k) z
           WHERE o.domain_id = d AND o.branch_id = bs[cardinality(bs)] AND o.to_key = k COLLATE "C"
             AND (NOT o.deleted OR o.seq > cuts[cardinality(bs)])
             AND dir <> 'out' AND (rel = '' OR o.relation = rel COLLATE "C") AND z.present
           ORDER BY o.relation, o.from_key LIMIT fanout)) y
  ORDER BY y.relation COLLATE "C", y.from_key COLLATE "C" LIMIT fanout)
$function$;
