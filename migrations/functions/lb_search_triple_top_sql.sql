-- lb_search_triple_top_sql: the statement reading one plateau of one word
-- of a three-word query whole (lb_search_triples): every Record of branch b
-- of Domain d holding word p_w[p_x] at score p_xs and both other words, at
-- any of their plateaus p_o1 and p_o2 (every score each holds, in the
-- order of p_w), from the GIN index of the plateaus' tokens (0027): the
-- plateau's token ANDed with the OR of each other word's tokens, so the
-- index reads the Records holding all three and the heap only those. Each
-- is scored from its search vector as the postings are (ts_rank of the
-- vector and the word alone), the three added in word order (p_w[1] first)
-- as lb_search_triples adds a triple of plateaus. The Domain and branch
-- are in the tokens alone, as in lb_search_triple_sql.
CREATE OR REPLACE FUNCTION lb_search_triple_top_sql(d integer, b integer, p_w text[], p_x integer, p_xs real, p_o1 real[], p_o2 real[])
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT coalesce(array_agg(m.key), '{}'),
       coalesce(array_agg(ts_rank(m.search, %4$L::tsquery)::float8 + ts_rank(m.search, %5$L::tsquery) + ts_rank(m.search, %6$L::tsquery)), '{}')
  FROM mat_records m
 WHERE lb_search_tokens(m.domain_id, m.branch_id, m.search) @> %1$L::text[] AND NOT m.deleted
   AND lb_search_tokens(m.domain_id, m.branch_id, m.search) && %2$L::text[]
   AND lb_search_tokens(m.domain_id, m.branch_id, m.search) && %3$L::text[]$q$,
       ARRAY[lb_search_token(d, b, p_w[p_x], p_xs)],
       ARRAY(SELECT lb_search_token(d, b, (p_w[1:p_x - 1] || p_w[p_x + 1:3])[1], x) FROM unnest(p_o1) x),
       ARRAY(SELECT lb_search_token(d, b, (p_w[1:p_x - 1] || p_w[p_x + 1:3])[2], x) FROM unnest(p_o2) x),
       lb_lexeme(p_w[1]), lb_lexeme(p_w[2]), lb_lexeme(p_w[3]))
$function$;
