-- lb_search_triple_top: lb_search_triple_top_sql run from the GIN index of
-- the plateaus' tokens alone (sequential and plain index scans off): every
-- Record of one plateau of word p_w[p_x] holding the other two words (at
-- their plateaus p_o1 and p_o2, in the order of p_w), with its sum.
CREATE OR REPLACE FUNCTION lb_search_triple_top(d integer, b integer, p_w text[], p_x integer, p_xs real, p_o1 real[], p_o2 real[], OUT keys text[], OUT sums double precision[])
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET enable_indexscan TO 'off'
AS $function$
BEGIN
    EXECUTE lb_search_triple_top_sql(d, b, p_w, p_x, p_xs, p_o1, p_o2) INTO keys, sums;
END
$function$;
