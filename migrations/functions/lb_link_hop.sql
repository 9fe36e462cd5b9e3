-- lb_link_hop is the effective Links of the Record k over the levels:
-- outgoing unless dir is 'in', incoming unless dir is 'out', of Relation
-- rel ('' for every Relation), at most fanout per direction (NULL: all),
-- each direction by (relation, other key). other is the Link's other end.
--
-- The upper levels (overlays, holding only their own changes) are read
-- once for k (up_out, up_in). A Link an upper level holds a row of is
-- decided over every level (lb_link_at) when that row is a candidate
-- (present, or changed after the level's cut); a row that is neither is a
-- deletion the level says at its cut, so the Link is absent. Every other
-- Link is decided by its bottom-level row alone (its state at the cut, or
-- its newest history row at or before the cut), with no probe of any
-- level: no upper level holds it. Before, each bottom-level Link was
-- looked up again on every level, two primary-key descents a Link for an
-- overlay over main. The bottom level's rows are read in index order and
-- only until fanout of them are present, so a Record with thousands of
-- Links reads about fanout of them, as on a single level. The first
-- fanout of the union are the first fanout present Links of every level:
-- a present Link is a candidate of the level that decides it, and a
-- bottom-level Link among the first fanout present is among the bottom
-- level's first fanout present rows.
CREATE OR REPLACE FUNCTION lb_link_hop(d integer, bs integer[], cuts bigint[], k text, dir text, rel text, fanout integer)
 RETURNS TABLE(relation text, from_key text, to_key text, origin "char", other text)
 LANGUAGE sql
 STABLE
AS $function$
WITH up_out AS (
    SELECT o.relation, o.to_key AS other, NOT o.deleted OR o.seq > l.c AS candidate
      FROM unnest(bs[1:cardinality(bs) - 1], cuts[1:cardinality(bs) - 1]) l(b, c)
      JOIN mat_links o ON o.domain_id = d AND o.branch_id = l.b AND o.from_key = k COLLATE "C"
     WHERE dir <> 'in' AND (rel = '' OR o.relation = rel COLLATE "C")),
up_in AS (
    SELECT o.relation, o.from_key AS other, NOT o.deleted OR o.seq > l.c AS candidate
      FROM unnest(bs[1:cardinality(bs) - 1], cuts[1:cardinality(bs) - 1]) l(b, c)
      JOIN mat_links o ON o.domain_id = d AND o.branch_id = l.b AND o.to_key = k COLLATE "C"
     WHERE dir <> 'out' AND (rel = '' OR o.relation = rel COLLATE "C"))
(SELECT y.relation, y.from_key, y.to_key, y.origin, y.to_key
   FROM ((SELECT z.relation, z.from_key, z.to_key, z.origin
            FROM (SELECT DISTINCT u.relation, u.other FROM up_out u WHERE u.candidate) x
           CROSS JOIN LATERAL lb_link_at(d, bs, cuts, k, x.relation, x.other) z
           WHERE z.present ORDER BY x.relation, x.other LIMIT fanout)
         UNION
         (SELECT o.relation, o.from_key, o.to_key, CASE WHEN o.seq <= cuts[cardinality(bs)] THEN o.origin ELSE h.origin END
            FROM mat_links o
            LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                   WHERE o.seq > cuts[cardinality(bs)] AND h.domain_id = d AND h.branch_id = o.branch_id
                     AND h.from_key = o.from_key AND h.relation = o.relation AND h.to_key = o.to_key
                     AND h.seq <= cuts[cardinality(bs)]
                   ORDER BY h.seq DESC LIMIT 1) h ON true
           WHERE o.domain_id = d AND o.branch_id = bs[cardinality(bs)] AND o.from_key = k COLLATE "C"
             AND (NOT o.deleted OR o.seq > cuts[cardinality(bs)])
             AND dir <> 'in' AND (rel = '' OR o.relation = rel COLLATE "C")
             AND CASE WHEN o.seq <= cuts[cardinality(bs)] THEN NOT o.deleted ELSE coalesce(h.op = 'link', false) END
             AND NOT EXISTS (SELECT 1 FROM up_out u WHERE u.relation = o.relation AND u.other = o.to_key)
           ORDER BY o.relation, o.to_key LIMIT fanout)) y
  ORDER BY y.relation COLLATE "C", y.to_key COLLATE "C" LIMIT fanout)
UNION ALL
(SELECT y.relation, y.from_key, y.to_key, y.origin, y.from_key
   FROM ((SELECT z.relation, z.from_key, z.to_key, z.origin
            FROM (SELECT DISTINCT u.relation, u.other FROM up_in u WHERE u.candidate) x
           CROSS JOIN LATERAL lb_link_at(d, bs, cuts, x.other, x.relation, k) z
           WHERE z.present ORDER BY x.relation, x.other LIMIT fanout)
         UNION
         (SELECT o.relation, o.from_key, o.to_key, CASE WHEN o.seq <= cuts[cardinality(bs)] THEN o.origin ELSE h.origin END
            FROM mat_links o
            LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                   WHERE o.seq > cuts[cardinality(bs)] AND h.domain_id = d AND h.branch_id = o.branch_id
                     AND h.from_key = o.from_key AND h.relation = o.relation AND h.to_key = o.to_key
                     AND h.seq <= cuts[cardinality(bs)]
                   ORDER BY h.seq DESC LIMIT 1) h ON true
           WHERE o.domain_id = d AND o.branch_id = bs[cardinality(bs)] AND o.to_key = k COLLATE "C"
             AND (NOT o.deleted OR o.seq > cuts[cardinality(bs)])
             AND dir <> 'out' AND (rel = '' OR o.relation = rel COLLATE "C")
             AND CASE WHEN o.seq <= cuts[cardinality(bs)] THEN NOT o.deleted ELSE coalesce(h.op = 'link', false) END
             AND NOT EXISTS (SELECT 1 FROM up_in u WHERE u.relation = o.relation AND u.other = o.from_key)
           ORDER BY o.relation, o.from_key LIMIT fanout)) y
  ORDER BY y.relation COLLATE "C", y.from_key COLLATE "C" LIMIT fanout)
$function$;
