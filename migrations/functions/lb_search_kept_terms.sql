-- lb_search_kept_terms: the terms of a query a full match must be looked
-- up by, once every term that another term implies is left out. The terms
-- are the OR of their words (p_w, with p_m the terms each word belongs to,
-- a bit per term; p_n the Records holding each, from the branch's
-- lexicon). A term whose words include every word of another term is
-- implied by it: a Record matching the other matches it too, as when a
-- misspelled word's corrections include the next word of the query
-- (Setel Steel Supply: setel | steel | set holds steel). Of two terms of
-- the same words the first is kept. words is the one word of each term
-- kept, in term order, when two terms are kept, one word each, and some
-- term is left out (NULL otherwise): the full matches are then the Records
-- holding both. others is the OR of the lexemes of the other words (those
-- of the terms left out only: NULL when none), which a full match may hold
-- beside them and which add to its score; others_n the Records holding
-- them (summed).
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_kept_terms(p_w text[], p_m integer[], p_n bigint[], p_terms integer, OUT words text[], OUT others text, OUT others_n bigint)
 RETURNS record
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    kept integer;
    kw text[];
BEGIN
    -- Each term's words, and the terms no other term implies.
    WITH tw AS (
        SELECT t.t, array_agg(u.w) AS ws
          FROM generate_series(0, p_terms - 1) t(t)
          JOIN unnest(p_w, p_m) u(w, m) ON u.m & (1 << t.t) <> 0
         GROUP BY t.t),
    k AS (
        SELECT a.t, a.ws
          FROM tw a
         WHERE NOT EXISTS (SELECT 1 FROM tw b
                            WHERE b.t <> a.t AND b.ws <@ a.ws AND (NOT a.ws <@ b.ws OR b.t < a.t)))
    SELECT (SELECT coalesce(sum(1 << k.t), 0)::integer FROM k),
           CASE WHEN p_terms > 2 AND (SELECT count(*) FROM tw) = p_terms AND (SELECT count(*) FROM k) = 2
                     AND (SELECT bool_and(cardinality(k.ws) = 1) FROM k)
                THEN (SELECT array_agg(k.ws[1] ORDER BY k.t) FROM k) END
      INTO kept, kw;
    IF kw IS NULL THEN
        RETURN;
    END IF;
    words := kw;
    SELECT string_agg(lb_lexeme(u.w), ' | ' ORDER BY u.w), coalesce(sum(u.n), 0)
      INTO others, others_n
      FROM unnest(p_w, p_m, p_n) u(w, m, n)
     WHERE u.m & kept = 0;
END
$function$;
