-- lb_link_cands_sql: the distinct (relation, other end) of the Link rows
-- of every level whose end col (from_key or to_key) is the expression k,
-- present or changed after the level's cut. other is the other end column.
CREATE OR REPLACE FUNCTION lb_link_cands_sql(d integer, bs integer[], cs bigint[], col text, other text, k text, rel text)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    s text := '';
    i int;
BEGIN
    FOR i IN 1..cardinality(bs) LOOP
        s := s || CASE WHEN i > 1 THEN ' UNION ALL ' ELSE '' END
             || format('SELECT o.relation, o.%I AS other FROM mat_links o WHERE o.domain_id = %L AND o.branch_id = %L AND o.%I = %s%s AND (NOT o.deleted OR o.seq > %L)',
                       other, d, bs[i], col, k, rel, cs[i]);
    END LOOP;
    RETURN format('(SELECT DISTINCT u.relation, u.other FROM (%s) u)', s);
END
$function$;
