-- lb_search_or_ok: whether lb_search_or_sql may answer a one-term query on
-- branch b whose present words hold p_counts Records each, that is whether
-- the GIN index finds the Records holding two of the words at small cost:
-- of every two words one is in fewer Records than 8 × p_candidates, or the
-- Records holding two, were the words independent of each other, number
-- fewer than 8 × p_candidates (over the branch's Records, from its
-- counters). Misspellings of common words have common corrections that
-- seldom meet in one Record: measured at 10M Records, two such words meet
-- in 0 to 1,850 Records and the GIN index finds them in 40 to 75 ms.
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_or_ok(d integer, b integer, p_counts bigint[], p_candidates integer)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
AS $function$
#variable_conflict use_column
BEGIN
    RETURN (
        WITH pairs AS (
            SELECT x.n AS a, y.n AS z
              FROM unnest(p_counts) WITH ORDINALITY x(n, i), unnest(p_counts) WITH ORDINALITY y(n, j)
             WHERE x.i < y.j)
        SELECT p_counts IS NOT NULL
           AND (coalesce((SELECT bool_and(least(a, z) < 8::bigint * p_candidates) FROM pairs), true)
                OR coalesce((SELECT sum(a::numeric * z) FROM pairs)
                            / nullif((SELECT sum(m.records) FROM refs r JOIN mat_counts m ON m.domain_id = r.domain_id AND m.branch_id = r.id
                                       WHERE r.domain_id = d AND r.id = b AND r.counts_from IS NOT NULL), 0)
                            < 8::numeric * p_candidates, false)));
END
$function$;
