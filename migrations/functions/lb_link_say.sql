-- lb_link_say is lb_record_say for the Link (f, rel, t): the say of one
-- level (branch b as of seq c), from its mat_links row at or before the cut
-- or else its newest mat_link_history row at or before the cut.
-- lb_link_hop decides the bottom level's Links by the same rule written
-- out over the rows it has read, rather than looking each up again here.
CREATE OR REPLACE FUNCTION lb_link_say(d integer, b integer, c bigint, f text, rel text, t text)
 RETURNS TABLE(present boolean, from_key text, relation text, to_key text, origin "char")
 LANGUAGE sql
 STABLE
AS $function$
SELECT CASE WHEN s.seq <= c THEN NOT s.deleted ELSE h.op = 'link' END,
       s.from_key, s.relation, s.to_key,
       CASE WHEN s.seq <= c THEN s.origin ELSE h.origin END
  FROM mat_links s
  LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
         WHERE s.seq > c AND h.domain_id = d AND h.branch_id = b AND h.from_key = s.from_key
           AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= c
         ORDER BY h.seq DESC LIMIT 1) h ON true
 WHERE s.domain_id = d AND s.branch_id = b
   AND s.from_key = f COLLATE "C" AND s.relation = rel COLLATE "C" AND s.to_key = t COLLATE "C"
   AND (s.seq <= c OR h.op IS NOT NULL)
$function$;
