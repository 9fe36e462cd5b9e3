-- lb_search_atleast: a tsquery matching the Records that match at least k
-- of the terms (the OR of every k-combination of them, each AND-ed). The
-- caller keeps the combinations few (lb_search tiers at most 6 terms).
CREATE OR REPLACE FUNCTION lb_search_atleast(terms tsquery[], k integer)
 RETURNS tsquery
 LANGUAGE sql
 IMMUTABLE
AS $function$
WITH RECURSIVE c(last, q, n) AS (
    SELECT i, terms[i], 1 FROM generate_subscripts(terms, 1) i
    UNION ALL
    SELECT j, c.q && terms[j], c.n + 1 FROM c, generate_subscripts(terms, 1) j WHERE j > c.last AND c.n < k)
SELECT string_agg('(' || c.q::text || ')', ' | ')::tsquery FROM c WHERE c.n = k
$function$;
