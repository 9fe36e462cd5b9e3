-- lb_state_links: the effective, present Links with an end among p_keys.
CREATE OR REPLACE FUNCTION lb_state_links(p_branch integer, p_keys text[])
 RETURNS TABLE(from_key text, relation text, to_key text, origin "char")
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
    arms text := '';
    i int;
BEGIN
    SELECT * INTO c FROM lb_state_levels(p_branch);
    IF cardinality(c.bs) = 1 THEN
        RETURN QUERY EXECUTE format($q$SELECT l.from_key::text, l.relation::text, l.to_key::text, l.origin FROM mat_links l
 WHERE l.domain_id = %1$L AND l.branch_id = %2$L AND l.from_key = ANY ($1) AND NOT l.deleted
UNION
SELECT l.from_key::text, l.relation::text, l.to_key::text, l.origin FROM mat_links l
 WHERE l.domain_id = %1$L AND l.branch_id = %2$L AND l.to_key = ANY ($1) AND NOT l.deleted$q$, c.d, p_branch) USING p_keys;
        RETURN;
    END IF;
    FOR i IN 1..cardinality(c.bs) LOOP
        arms := arms || CASE WHEN i > 1 THEN ' UNION ALL ' ELSE '' END
             || format($q$SELECT o.from_key, o.relation, o.to_key FROM mat_links o
   WHERE o.domain_id = %1$L AND o.branch_id = %2$L AND o.from_key = ANY ($1) AND (NOT o.deleted OR o.seq > %3$L)
  UNION ALL
  SELECT o.from_key, o.relation, o.to_key FROM mat_links o
   WHERE o.domain_id = %1$L AND o.branch_id = %2$L AND o.to_key = ANY ($1) AND (NOT o.deleted OR o.seq > %3$L)$q$,
                       c.d, c.bs[i], c.cs[i]);
    END LOOP;
    RETURN QUERY EXECUTE format($q$SELECT z.from_key::text, z.relation::text, z.to_key::text, z.origin
  FROM (SELECT DISTINCT u.from_key, u.relation, u.to_key FROM (%1$s) u) q
 CROSS JOIN LATERAL %2$s z
 WHERE z.present$q$, arms, lb_link_eff_sql(c.d, c.bs, c.cs, c.hs, 'q.from_key', 'q.relation', 'q.to_key')) USING p_keys;
END
$function$;
