-- lb_search_triple_plateau_sql: the statement reading one plateau of one
-- word of a three-word query whole (lb_search_triples) from its token
-- alone in the GIN index of the plateaus' tokens (0027), each of its
-- Records' rows then checked for the other two words: every Record of
-- branch b of Domain d holding word p_w[p_x] at score p_xs and both other
-- words, scored as lb_search_triple_top_sql scores them (the three ranks
-- added in word order). The check runs on the rows the token found (the
-- subquery is not flattened), never as a read of the search vectors' GIN
-- index.
CREATE OR REPLACE FUNCTION lb_search_triple_plateau_sql(d integer, b integer, p_w text[], p_x integer, p_xs real)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT coalesce(array_agg(x.key), '{}'),
       coalesce(array_agg(ts_rank(x.search, %3$L::tsquery)::float8 + ts_rank(x.search, %4$L::tsquery) + ts_rank(x.search, %5$L::tsquery)), '{}')
  FROM (SELECT m.key, m.search FROM mat_records m
         WHERE lb_search_tokens(m.domain_id, m.branch_id, m.search) @> %1$L::text[] AND NOT m.deleted
        OFFSET 0) x
 WHERE x.search @@ %2$L::tsquery$q$,
       ARRAY[lb_search_token(d, b, p_w[p_x], p_xs)],
       lb_lexeme((p_w[1:p_x - 1] || p_w[p_x + 1:3])[1]) || ' & ' || lb_lexeme((p_w[1:p_x - 1] || p_w[p_x + 1:3])[2]),
       lb_lexeme(p_w[1]), lb_lexeme(p_w[2]), lb_lexeme(p_w[3]))
$function$;
