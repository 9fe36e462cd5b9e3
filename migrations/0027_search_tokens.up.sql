-- Each word of a Record's search vector with its postings score (its
-- plateau, lb_search_plateaus) as one token of a GIN index on mat_records:
-- the Records holding three words at given plateaus are the AND of three
-- tokens' posting lists (lb_search_triple_meet), and the Records of one
-- plateau holding two other words the AND of its token with the others'
-- plateaus (lb_search_triple_top), instead of merging the postings' ranges
-- in key order and probing the postings' primary key once a Record and
-- word (docs/performance.md, "Three common words from a GIN index of their
-- plateaus").
--
-- A token is the Domain, the branch, the score's four bytes in hex and the
-- word ('7.1.3f428963steel'): unique for a (Domain, branch, word, score),
-- so a token's list holds one plateau of one branch alone, and the score
-- is written whatever extra_float_digits says. The score is the one the
-- postings trigger (lb_search_words_apply) stores: ts_rank of the vector
-- and the word alone.
--
-- The two functions are created here, before the index, and kept in
-- migrations/functions/ with the same bodies. The index is built with them:
-- changing a body is a new index in a new migration. They call nothing but
-- the catalog's own functions, whatever the search_path.
CREATE FUNCTION lb_search_token(d integer, b integer, w text, s real)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
SELECT d::text || '.' || b::text || '.' || encode(pg_catalog.float4send(s), 'hex') || w
$function$;

CREATE FUNCTION lb_search_tokens(d integer, b integer, v tsvector)
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
SELECT pg_catalog.array_agg(d::text || '.' || b::text || '.'
       || encode(pg_catalog.float4send(pg_catalog.ts_rank(v, ('''' || replace(replace(w, '\', '\\'), '''', '''''') || '''')::tsquery)), 'hex')
       || w)
  FROM pg_catalog.unnest(pg_catalog.tsvector_to_array(v)) w
$function$;

CREATE INDEX mat_records_tokens_idx ON mat_records USING gin (lb_search_tokens(domain_id, branch_id, search)) WHERE NOT deleted;

-- As the search vectors' index (0025): a pending list of at most 256 kB.
DO $$
DECLARE
    ix regclass;
BEGIN
    FOR ix IN SELECT h.inhrelid::regclass FROM pg_inherits h WHERE h.inhparent = 'mat_records_tokens_idx'::regclass LOOP
        EXECUTE format('ALTER INDEX %s SET (gin_pending_list_limit = 256)', ix);
    END LOOP;
END
$$;

-- The merge of two plateaus' postings is replaced by the meeting of three
-- tokens (lb_search_triple_meet); a plateau read whole takes the other two
-- words' plateaus.
DROP FUNCTION IF EXISTS lb_search_triple_merge(integer, integer, text, real, text, real, text, real, integer);
DROP FUNCTION IF EXISTS lb_search_triple_top(integer, integer, text[], integer, real);
DROP FUNCTION IF EXISTS lb_search_triple_top_sql(integer, integer, text[], integer, real);
