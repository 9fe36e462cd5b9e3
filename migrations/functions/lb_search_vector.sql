-- lb_search_vector computes a Record version's search vector as the commit
-- does, from the Kind's search Attributes in the branch's schema.
CREATE OR REPLACE FUNCTION lb_search_vector(d integer, b integer, p_kind text, p_title text, p_values jsonb)
 RETURNS tsvector
 LANGUAGE sql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
SELECT setweight(to_tsvector('simple', coalesce(p_title, '')), 'A') || setweight(to_tsvector('simple', coalesce((
    SELECT string_agg(p_values ->> (a ->> 'name'), ' ')
      FROM schemas sc, jsonb_array_elements(sc.compiled -> 'kinds' -> p_kind -> 'attributes') a
     WHERE sc.domain_id = d AND sc.branch_id = b AND (a ->> 'search')::boolean
       AND a ->> 'name' IS DISTINCT FROM sc.compiled -> 'kinds' -> p_kind ->> 'title'), '')), 'B')
$function$;
