-- lb_vector_search says how semantic search finds vectors in this
-- database: 'hnsw' where the vector extension (pgvector) is installed, else
-- 'exact'. It is the one probe of pgvector: lb_semantic, GET /readyz, the
-- schema read and the HNSW index job all ask it.
CREATE OR REPLACE FUNCTION lb_vector_search()
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT CASE WHEN EXISTS (SELECT FROM pg_extension WHERE extname = 'vector') THEN 'hnsw' ELSE 'exact' END $function$;
