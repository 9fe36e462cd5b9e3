-- lb_search_triple_sql: the statement reading the first p_limit Records,
-- in key order, that hold word p_x at score p_xs, word p_y at score p_ys
-- and word p_z at score p_zs on branch b of Domain d (the meeting of three
-- plateaus, lb_search_plateaus), as an array of keys: the AND of the three
-- plateaus' tokens in the GIN index mat_records_tokens_idx (0027; each
-- token's posting list is one plateau), then the heap rows of the Records
-- all three hold. lb_search_triple_meet runs it. The Domain and branch are
-- in the tokens alone: a condition on the columns would let the planner
-- read the branch's range of another index instead, filtering every Record
-- by its tokens, when the statistics think the branch small (a new Domain);
-- without one every partition's index is asked, the other Domains' holding
-- no such token.
CREATE OR REPLACE FUNCTION lb_search_triple_sql(d integer, b integer, p_x text, p_xs real, p_y text, p_ys real, p_z text, p_zs real, p_limit integer)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT coalesce(array_agg(x.key ORDER BY x.key), '{}') FROM (
  SELECT m.key FROM mat_records m
   WHERE lb_search_tokens(m.domain_id, m.branch_id, m.search) @> %1$L::text[] AND NOT m.deleted
   ORDER BY m.key LIMIT %2$s) x$q$,
       ARRAY[lb_search_token(d, b, p_x, p_xs), lb_search_token(d, b, p_y, p_ys), lb_search_token(d, b, p_z, p_zs)], p_limit)
$function$;
