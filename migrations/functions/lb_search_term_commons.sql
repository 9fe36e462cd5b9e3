-- lb_search_term_commons: of the words p_w of a query's terms (p_m: the
-- terms each word belongs to, a bit per term; p_n: the Records holding
-- each, from the branch's lexicon), the common ones (words, with their
-- terms in masks, in term order; words_min: the fewest Records any of them
-- holds): the most common word of each term, then the next most common
-- words of any term while the Records holding the words left out number
-- p_others or more. others is the OR of the lexemes left out (NULL when
-- none), others_n the Records holding them (summed); single says every
-- word belongs to one term only.
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_term_commons(p_w text[], p_m integer[], p_n bigint[], p_others bigint, OUT words text[], OUT masks integer[], OUT words_min bigint, OUT others text, OUT others_n bigint, OUT single boolean)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    SELECT array_agg(y.w ORDER BY y.mask, y.n DESC, y.w) FILTER (WHERE y.common),
           array_agg(y.mask ORDER BY y.mask, y.n DESC, y.w) FILTER (WHERE y.common),
           min(y.n) FILTER (WHERE y.common),
           string_agg(lb_lexeme(y.w), ' | ' ORDER BY y.w) FILTER (WHERE NOT y.common),
           coalesce(sum(y.n) FILTER (WHERE NOT y.common), 0),
           coalesce(bool_and(y.mask & (y.mask - 1) = 0), false)
      INTO words, masks, words_min, others, others_n, single
      FROM (SELECT x.w, x.mask, x.n,
                   -- A term's most common word, or a word that the words
                   -- rarer than it (in any term) do not hold p_others
                   -- Records without.
                   x.rk = 1 OR x.n + x.rarer >= p_others AS common
              FROM (SELECT u.w, u.mask, u.n,
                           row_number() OVER (PARTITION BY u.mask ORDER BY u.n DESC, u.w) AS rk,
                           coalesce(sum(u.n) OVER (ORDER BY u.n, u.w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS rarer
                      FROM unnest(p_w, p_m, p_n) u(w, mask, n)) x) y;
END
$function$;
