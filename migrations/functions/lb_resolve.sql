-- lb_resolve: entity resolution of a mention, its search and per-candidate
-- checks without parallel workers (as lb_search). A branch read as one
-- level and an overlay over one base (the shape of an agent's branch) run
-- one static statement each, planned once a session (a generic plan):
-- at 100k planning the text of lb_resolve_sql took 0.5-0.8 ms a call on a
-- branch and 2.2-2.5 ms on an overlay, whose statement reads the
-- effective Record of the mention and of each full match over two levels
-- (lb_record_say, inlined). Deeper chains run lb_resolve_sql's text,
-- which ranks the same way (TestResolveStaticMatchesText).
CREATE OR REPLACE FUNCTION lb_resolve(p_branch text, p_mention text, p_kind text, p_limit integer, p_candidates integer DEFAULT 1000, p_partial_candidates integer DEFAULT 100)
 RETURNS TABLE(key text, kind text, title text, score real, reason text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
 SET enable_seqscan TO 'off'
 SET max_parallel_workers_per_gather TO '0'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
DECLARE
    sc record;
    k_kind text := coalesce(p_kind, '');
    c1 bigint;
    c2 bigint;
BEGIN
    SELECT * INTO sc FROM lb_scope_chain(p_branch, NULL);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF cardinality(sc.bs) > 2 THEN
        RETURN QUERY EXECUTE lb_resolve_sql(p_branch, p_mention, p_kind, p_limit, p_candidates, p_partial_candidates);
        RETURN;
    END IF;
    -- Each level's cut as lb_rec_eff_sql gives it: a level read at or past
    -- its head takes its rows as they are. A branch read as one level has
    -- no second level: its cut is NULL and lb_record_say says nothing.
    c1 := CASE WHEN sc.cs[1] >= sc.hs[1] THEN 9223372036854775807 ELSE sc.cs[1] END;
    c2 := CASE WHEN sc.cs[2] >= sc.hs[2] THEN 9223372036854775807 ELSE sc.cs[2] END;
    RETURN QUERY
    WITH k AS (
        SELECT e.key::text AS key, e.kind::text AS kind, e.title
          FROM (SELECT y.lvl, y.present, y.key, y.kind, y.title
                  FROM (SELECT 1 AS lvl, s.present, s.key, s.kind, s.title FROM lb_record_say(sc.d, sc.bs[1], c1, p_mention) s
                        UNION ALL
                        SELECT 2, s.present, s.key, s.kind, s.title FROM lb_record_say(sc.d, sc.bs[2], c2, p_mention) s
                         WHERE c2 IS NOT NULL) y
                 ORDER BY y.lvl LIMIT 1) e
         WHERE e.present AND (k_kind = '' OR e.kind = k_kind)),
    s AS (
        SELECT s.key, s.kind, s.title, s.score, s.match
          FROM lb_search(p_branch, p_mention, k_kind, p_limit, NULL, p_candidates, p_limit, p_partial_candidates) s
         WHERE s.match IN ('full', 'partial') AND s.key NOT IN (SELECT k.key FROM k)),
    c AS (
        SELECT k.key, k.kind, k.title, 1::real AS score, 'key'::text AS reason, 0 AS prio FROM k
        UNION ALL
        SELECT s.key, s.kind, s.title, s.score, z.reason, z.prio
          FROM s CROSS JOIN LATERAL (
            SELECT CASE WHEN lower(s.title) = lower(p_mention) THEN 'title'
                        WHEN s.match = 'full' AND NOT EXISTS (
                             SELECT 1
                               FROM (SELECT y.present, y.branch_id, y.kind, y.title, y."values", y.search
                                       FROM (SELECT 1 AS lvl, s1.present, sc.bs[1] AS branch_id, s1.kind, s1.title, s1."values", s1.search
                                               FROM lb_record_say(sc.d, sc.bs[1], c1, s.key) s1
                                             UNION ALL
                                             SELECT 2, s2.present, sc.bs[2], s2.kind, s2.title, s2."values", s2.search
                                               FROM lb_record_say(sc.d, sc.bs[2], c2, s.key) s2
                                              WHERE c2 IS NOT NULL) y
                                      ORDER BY y.lvl LIMIT 1) e
                              WHERE e.present AND coalesce(e.search, lb_search_vector(sc.d, e.branch_id, e.kind, e.title, e."values"))
                                    @@ plainto_tsquery('simple', p_mention)) THEN 'typo'
                        ELSE 'partial' END AS reason) r
          CROSS JOIN LATERAL (SELECT r.reason, CASE r.reason WHEN 'title' THEN 1 WHEN 'typo' THEN 2 ELSE 3 END AS prio) z)
    SELECT c.key, c.kind, c.title, c.score, c.reason FROM c
     ORDER BY c.prio, c.score DESC, c.key COLLATE "C"
     LIMIT p_limit;
END
$function$;
