-- lb_search_triple_top: lb_search_triple_top_sql run as nested loops
-- probing the primary key: every Record of one plateau of word p_w[p_x]
-- holding the other two words, with its sum.
CREATE OR REPLACE FUNCTION lb_search_triple_top(d integer, b integer, p_w text[], p_x integer, p_xs real, OUT keys text[], OUT sums double precision[])
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_mergejoin TO 'off'
 SET enable_hashjoin TO 'off'
AS $function$
BEGIN
    EXECUTE lb_search_triple_top_sql(d, b, p_w, p_x, p_xs) INTO keys, sums;
END
$function$;
