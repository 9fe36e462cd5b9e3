-- lb_search_triple_plateau: lb_search_triple_plateau_sql run from the GIN
-- index of the plateaus' tokens alone (sequential and plain index scans
-- off): every Record of one plateau of word p_w[p_x] holding the other two
-- words, with its sum, as lb_search_triple_top answers, read from the
-- plateau's heap rows instead of the index's AND with the other words.
CREATE OR REPLACE FUNCTION lb_search_triple_plateau(d integer, b integer, p_w text[], p_x integer, p_xs real, OUT keys text[], OUT sums double precision[])
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET enable_indexscan TO 'off'
AS $function$
BEGIN
    EXECUTE lb_search_triple_plateau_sql(d, b, p_w, p_x, p_xs) INTO keys, sums;
END
$function$;
