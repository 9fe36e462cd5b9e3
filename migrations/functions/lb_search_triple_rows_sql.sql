-- lb_search_triple_rows_sql: the statement reading, for a three-word query
-- (lb_search_triples), the Records of branch b of Domain d that hold the
-- words p_w[p_x[i]] at scores p_xs[i] (one plateau of one word, or the
-- meeting of two plateaus of two words) from their tokens alone in the GIN
-- index of the plateaus' tokens (0027), each of their rows then checked
-- for the other words: the keys of those holding all three words, their
-- sums (the three ranks added in word order, as lb_search_triple_top_sql
-- adds them), and how many rows the tokens found. The check runs on the
-- rows the tokens found (the subquery is not flattened), never as a read
-- of the search vectors' GIN index. With p_cap, at most p_cap + 1 rows are
-- read: more than p_cap found says the answer is not whole.
CREATE OR REPLACE FUNCTION lb_search_triple_rows_sql(d integer, b integer, p_w text[], p_x integer[], p_xs real[], p_cap integer DEFAULT NULL::integer)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT coalesce(array_agg(x.key) FILTER (WHERE x.search @@ %2$L::tsquery), '{}'),
       coalesce(array_agg(ts_rank(x.search, %3$L::tsquery)::float8 + ts_rank(x.search, %4$L::tsquery) + ts_rank(x.search, %5$L::tsquery))
                FILTER (WHERE x.search @@ %2$L::tsquery), '{}'),
       count(*)::int
  FROM (SELECT m.key, m.search FROM mat_records m
         WHERE lb_search_tokens(m.domain_id, m.branch_id, m.search) @> %1$L::text[] AND NOT m.deleted
        %6$s) x$q$,
       ARRAY(SELECT lb_search_token(d, b, p_w[u.x], u.s) FROM unnest(p_x, p_xs) u(x, s)),
       (SELECT string_agg(lb_lexeme(p_w[i]), ' & ' ORDER BY i) FROM generate_series(1, 3) i WHERE i <> ALL (p_x)),
       lb_lexeme(p_w[1]), lb_lexeme(p_w[2]), lb_lexeme(p_w[3]),
       CASE WHEN p_cap IS NULL THEN 'OFFSET 0' ELSE 'LIMIT ' || (p_cap::bigint + 1) END)
$function$;
