-- lb_search_atleast: a tsquery matching the Records that match at least k
-- of the terms (the OR of every k-combination of them, each AND-ed). The
-- caller keeps the combinations few (lb_search tiers at most 6 terms).
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_atleast(terms tsquery[], k integer)
 RETURNS tsquery
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
#variable_conflict use_column
BEGIN
    RETURN (
        WITH RECURSIVE c(last, q, n) AS (
            SELECT i, terms[i], 1 FROM generate_subscripts(terms, 1) i
            UNION ALL
            SELECT j, c.q && terms[j], c.n + 1 FROM c, generate_subscripts(terms, 1) j WHERE j > c.last AND c.n < k)
        SELECT string_agg('(' || c.q::text || ')', ' | ')::tsquery FROM c WHERE c.n = k);
END
$function$;
