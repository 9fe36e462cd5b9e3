-- lb_search_tokens: the tokens of search vector v on branch b of Domain d,
-- one a word (lb_search_token), with the word's postings score (ts_rank of
-- the vector and the word alone, as lb_search_words_apply scores it): the
-- expression of the GIN index mat_records_tokens_idx (migration 0027). The
-- index is built with this body: changing it is a new index in a new
-- migration, never an edit here alone. It calls the catalog's functions
-- alone, whatever the search_path.
CREATE OR REPLACE FUNCTION lb_search_tokens(d integer, b integer, v tsvector)
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
SELECT pg_catalog.array_agg(d::text || '.' || b::text || '.'
       || encode(pg_catalog.float4send(pg_catalog.ts_rank(v, ('''' || replace(replace(w, '\', '\\'), '''', '''''') || '''')::tsquery)), 'hex')
       || w)
  FROM pg_catalog.unnest(pg_catalog.tsvector_to_array(v)) w
$function$;
