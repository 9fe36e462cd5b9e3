-- lb_search_lexemes: the distinct lexemes of a query's words and their
-- corrections (corrs: one jsonb array of corrections per word). A Record
-- version whose lowered title and values hold none of them matches no
-- term (lb_search_overlay_own tests this before computing a version's
-- search vector).
CREATE OR REPLACE FUNCTION lb_search_lexemes(words text[], corrs jsonb[])
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT array_agg(DISTINCT lx)
  FROM unnest(words || ARRAY(SELECT jsonb_array_elements_text(c) FROM unnest(corrs) c)) w,
       unnest(tsvector_to_array(to_tsvector('simple', w))) lx
$function$;
