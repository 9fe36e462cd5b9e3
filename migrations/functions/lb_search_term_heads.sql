-- lb_search_term_heads: of the words p_w of a query's terms (p_m: the
-- terms each word belongs to, a bit per term), the most common word of
-- each term on branch b of Domain d (heads, in term order; heads_min: the
-- fewest Records any of them holds) and the others (others: the OR of
-- their lexemes, NULL when there are none; others_n: the Records holding
-- them, summed from the lexicon): a misspelled word's rarer corrections
-- beside its common one. single says every word belongs to one term only.
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_term_heads(d integer, b integer, p_w text[], p_m integer[], OUT heads text[], OUT heads_min bigint, OUT others text, OUT others_n bigint, OUT single boolean)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    SELECT array_agg(x.w ORDER BY x.mask) FILTER (WHERE x.rk = 1),
           min(x.n) FILTER (WHERE x.rk = 1),
           string_agg(lb_lexeme(x.w), ' | ' ORDER BY x.w) FILTER (WHERE x.rk > 1),
           coalesce(sum(x.n) FILTER (WHERE x.rk > 1), 0),
           coalesce(bool_and(x.mask & (x.mask - 1) = 0), false)
      INTO heads, heads_min, others, others_n, single
      FROM (SELECT u.w, u.mask, coalesce(l.records, 0)::bigint AS n,
                   row_number() OVER (PARTITION BY u.mask ORDER BY coalesce(l.records, 0) DESC, u.w) AS rk
              FROM unnest(p_w, p_m) u(w, mask)
              LEFT JOIN mat_lexicon l ON l.domain_id = d AND l.branch_id = b AND l.word = u.w) x;
END
$function$;
