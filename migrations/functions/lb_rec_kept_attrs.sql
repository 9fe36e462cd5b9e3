-- lb_rec_kept_attrs: for branch b's compiled schema, each Kind's title
-- Attribute and search Attributes (what a Record's title and search
-- vector are made of), as a jsonb object Kind -> array of names in name
-- order; a Kind with none is left out. A base row changed after an
-- overlay's fork stands for its version at the fork in the overlay's
-- search when it was created at or before the fork, is present and the
-- lineage of each of its Kind's names here is at or before the fork
-- (lb_search_overlay, lb_search_overlay_own). PL/pgSQL, not SQL: an SQL
-- function with a SET clause is not inlined, and was planned again in
-- every transaction that called it (once per overlay search whose base
-- moved on after the fork); PL/pgSQL keeps the plan of its statement for
-- the session.
CREATE OR REPLACE FUNCTION lb_rec_kept_attrs(d integer, b integer)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    RETURN (
        SELECT coalesce(jsonb_object_agg(z.kind, z.attrs), '{}')
          FROM (SELECT k.key AS kind, jsonb_agg(a.name ORDER BY a.name) AS attrs
                  FROM schemas sc
                 CROSS JOIN LATERAL jsonb_each(sc.compiled -> 'kinds') k
                 CROSS JOIN LATERAL (SELECT x.a ->> 'name' AS name
                                       FROM jsonb_array_elements(k.value -> 'attributes') x(a)
                                      WHERE coalesce((x.a ->> 'search')::boolean, false)
                                         OR x.a ->> 'name' = k.value ->> 'title'
                                     UNION
                                     SELECT k.value ->> 'title' WHERE k.value ->> 'title' IS NOT NULL) a
                 WHERE sc.domain_id = d AND sc.branch_id = b
                 GROUP BY k.key) z);
END
$function$;
