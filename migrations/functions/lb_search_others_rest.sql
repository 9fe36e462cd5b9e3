-- lb_search_others_rest: what a Record holding one of a query's other
-- words (the words p_w not in p_common: lb_search_term_commons' others,
-- a misspelled word's rarer corrections) must match besides to match at
-- least k of the terms. The terms are the OR of their words' lexemes (p_m:
-- the terms each word belongs to, a bit per term). When every other word
-- belongs to the same one term t, a Record holding one holds t, so k - 1
-- of the remaining terms suffice: the GIN index then leaves out t's common
-- words, whose posting lists it would decode whole (at 10M, Setel Shim Ltd:
-- set or setel beside two of setel | steel | set, ltd and shim read 2,504
-- index pages, 41 ms, for 60 Records; set or setel beside ltd or shim 80
-- pages, 3 ms, the same 60). Otherwise, the terms at least k at a time
-- (lb_search_atleast).
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan of
-- its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_others_rest(terms tsquery[], p_w text[], p_m integer[], p_common text[], k integer)
 RETURNS tsquery
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    om integer;
    others tsquery[];
    rest tsquery;
BEGIN
    SELECT CASE WHEN count(DISTINCT u.m) = 1 THEN min(u.m) END INTO om
      FROM unnest(p_w, p_m) u(w, m)
     WHERE u.w <> ALL (p_common);
    IF om IS NOT NULL AND k >= 2 THEN
        -- One term left out exactly when om is that term's bit alone.
        others := ARRAY(SELECT x.t FROM unnest(terms) WITH ORDINALITY x(t, o)
                         WHERE (1 << (x.o - 1)::int) <> om ORDER BY x.o);
        IF cardinality(others) = cardinality(terms) - 1 THEN
            rest := lb_search_atleast(others, k - 1);
        END IF;
    END IF;
    RETURN coalesce(rest, lb_search_atleast(terms, k));
END
$function$;
