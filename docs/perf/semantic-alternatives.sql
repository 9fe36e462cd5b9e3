-- Side-by-side measurement of exact and approximate nearest-vector scans
-- without pgvector, over the vectors perf/cmd/semantic loaded (Domain 1,
-- 100,000 vectors of 256 dims from the hash embedder). Run as the owner on
-- the perf database after:
--   go run ./perf/cmd/semantic --records 100000 --checkpoints 100000 ...
-- (with LOREBASE_TEST_DATABASE_URL pointing at a kept server), then
--   psql "$URL/perf_semantic_..." -f docs/perf/semantic-alternatives.sql
-- It builds scratch tables (exp, exp_sig, exp_cube, exp_res) and needs the
-- contrib extension cube. Queries are 10 stored vectors (by md5 of key);
-- the truth is the exact top 10; recall@10 is the share of it each
-- method's top 10 finds. Timings are one statement each, as the owner,
-- with no branch or filter join (the scan and ranking alone).
CREATE EXTENSION IF NOT EXISTS cube;
CREATE OR REPLACE FUNCTION exp_sig(a real[]) RETURNS bit varying LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(CASE WHEN x > 0 THEN '1' ELSE '0' END, '' ORDER BY i)::varbit FROM unnest(a) WITH ORDINALITY t(x, i) $$;
DROP TABLE IF EXISTS exp;
CREATE TABLE exp AS SELECT domain_id, key, seq, spec, kind, exp_sig(embedding) AS sig,
   cube(embedding[1:100]::float8[]) c1, cube(embedding[101:200]::float8[]) c2, cube(embedding[201:256]::float8[]) c3, embedding
  FROM mat_vectors WHERE domain_id = 1;
CREATE OR REPLACE FUNCTION exp_bits(a real[], pos boolean) RETURNS bit varying LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(CASE WHEN (pos AND x > 0) OR (NOT pos AND x < 0) THEN '1' ELSE '0' END, '' ORDER BY i)::varbit FROM unnest(a) WITH ORDINALITY t(x, i) $$;
DROP TABLE IF EXISTS exp_sig, exp_cube, exp_res;
CREATE TABLE exp_sig AS SELECT key, seq, sig, exp_bits(embedding, false) AS neg FROM exp;
CREATE TABLE exp_cube AS SELECT key, seq, c1, c2, c3 FROM exp;
VACUUM ANALYZE exp_sig; VACUUM ANALYZE exp_cube;
CREATE TABLE exp_res (method text, q text, ms double precision, recall double precision);
DO $$
DECLARE
  qk text; t0 timestamptz; truth text[]; got text[]; qv real[]; qs varbit; qn varbit; q1 cube; q2 cube; q3 cube;
BEGIN
  FOR qk IN SELECT key FROM exp ORDER BY md5(key) LIMIT 10 LOOP
    SELECT embedding, sig, exp_bits(embedding, false), c1, c2, c3 INTO qv, qs, qn, q1, q2, q3 FROM exp WHERE key = qk;
    t0 := clock_timestamp();
    SELECT array_agg(key) INTO truth FROM (SELECT key FROM exp_cube ORDER BY (c1 <-> q1)^2 + (c2 <-> q2)^2 + (c3 <-> q3)^2, key LIMIT 10) s;
    INSERT INTO exp_res VALUES ('cube exact, full scan', qk, extract(epoch FROM clock_timestamp() - t0) * 1000, 1);
    t0 := clock_timestamp();
    SELECT array_agg(key) INTO got FROM (SELECT e.key FROM (SELECT key FROM exp_sig ORDER BY bit_count(sig # qs) LIMIT 200) c
       JOIN exp_cube e USING (key) ORDER BY (e.c1 <-> q1)^2 + (e.c2 <-> q2)^2 + (e.c3 <-> q3)^2, e.key LIMIT 10) s;
    INSERT INTO exp_res VALUES ('sign bits, hamming top 200, cube rerank', qk, extract(epoch FROM clock_timestamp() - t0) * 1000,
       (SELECT count(*) FROM unnest(got) g WHERE g = ANY (truth)) / 10.0);
    t0 := clock_timestamp();
    SELECT array_agg(key) INTO got FROM (SELECT e.key FROM (SELECT key FROM exp_sig
         ORDER BY bit_count(sig & qs) + bit_count(neg & qn) - bit_count(sig & qn) - bit_count(neg & qs) DESC LIMIT 200) c
       JOIN exp_cube e USING (key) ORDER BY (e.c1 <-> q1)^2 + (e.c2 <-> q2)^2 + (e.c3 <-> q3)^2, e.key LIMIT 10) s;
    INSERT INTO exp_res VALUES ('ternary bits, top 200, cube rerank', qk, extract(epoch FROM clock_timestamp() - t0) * 1000,
       (SELECT count(*) FROM unnest(got) g WHERE g = ANY (truth)) / 10.0);
    t0 := clock_timestamp();
    SELECT array_agg(key) INTO got FROM (SELECT e.key FROM (SELECT key FROM exp_sig
         ORDER BY bit_count(sig & qs) + bit_count(neg & qn) - bit_count(sig & qn) - bit_count(neg & qs) DESC LIMIT 200) c
       JOIN exp e USING (key) ORDER BY lb_dot(e.embedding, qv) DESC, e.key LIMIT 10) s;
    INSERT INTO exp_res VALUES ('ternary bits, top 200, lb_dot rerank', qk, extract(epoch FROM clock_timestamp() - t0) * 1000,
       (SELECT count(*) FROM unnest(got) g WHERE g = ANY (truth)) / 10.0);
    t0 := clock_timestamp();
    SELECT array_agg(key) INTO got FROM (SELECT key FROM exp ORDER BY lb_dot(embedding, qv) DESC, key LIMIT 10) s;
    INSERT INTO exp_res VALUES ('lb_dot exact, full scan (today)', qk, extract(epoch FROM clock_timestamp() - t0) * 1000,
       (SELECT count(*) FROM unnest(got) g WHERE g = ANY (truth)) / 10.0);
  END LOOP;
END $$;
SELECT method, count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1) p50,
       round(percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)::numeric, 1) p95, round(avg(recall)::numeric, 3) recall10
  FROM exp_res GROUP BY 1 ORDER BY p50;
SELECT pg_size_pretty(pg_total_relation_size('exp_sig')), pg_size_pretty(pg_total_relation_size('exp_cube')), pg_size_pretty(pg_total_relation_size('mat_vectors_p0'));
