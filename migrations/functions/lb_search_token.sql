-- lb_search_token: the token of word w at postings score s on branch b of
-- Domain d in the GIN index of the plateaus (mat_records_tokens_idx,
-- migration 0027): the Domain, the branch, the score's four bytes in hex
-- and the word, as lb_search_tokens writes each word of a Record. The
-- index is built with these bodies: changing one is a new index in a new
-- migration, never an edit here alone.
CREATE OR REPLACE FUNCTION lb_search_token(d integer, b integer, w text, s real)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
SELECT d::text || '.' || b::text || '.' || encode(pg_catalog.float4send(s), 'hex') || w
$function$;
