-- lb_search_vector_sql: the search vector expression of a version of
-- branch b with columns x.kind, x.title and x."values". plpgsql, so a
-- session plans its statement once.
CREATE OR REPLACE FUNCTION lb_search_vector_sql(d integer, b integer)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    RETURN format($q$setweight(to_tsvector('simple', coalesce(x.title, '')), 'A') || setweight(to_tsvector('simple', %s), 'B')$q$,
       coalesce((SELECT 'CASE x.kind' || string_agg(format(' WHEN %L THEN concat_ws('' '', VARIADIC ARRAY[%s]::text[])', z.kind, z.attrs), '' ORDER BY z.kind)
                        || $q$ ELSE '' END$q$
                   FROM (SELECT k.key AS kind, string_agg(format('x."values" ->> %L', a.a ->> 'name'), ', ' ORDER BY a.o) AS attrs
                           FROM schemas sc
                          CROSS JOIN LATERAL jsonb_each(sc.compiled -> 'kinds') k
                          CROSS JOIN LATERAL jsonb_array_elements(k.value -> 'attributes') WITH ORDINALITY a(a, o)
                          WHERE sc.domain_id = d AND sc.branch_id = b AND (a.a ->> 'search')::boolean
                            AND a.a ->> 'name' IS DISTINCT FROM k.value ->> 'title'
                          GROUP BY k.key) z), $q$''$q$));
END
$function$;
