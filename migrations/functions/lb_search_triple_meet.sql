-- lb_search_triple_meet: lb_search_triple_sql run from the GIN index of
-- the plateaus' tokens alone (sequential and plain index scans off): the
-- first p_limit Records in key order holding the three words at the three
-- scores. Every Record of the meeting is read (a few, the meeting of three
-- plateaus being the rare case that makes lb_search_triples read it
-- rather than a plateau whole); they are sorted by key.
CREATE OR REPLACE FUNCTION lb_search_triple_meet(d integer, b integer, p_x text, p_xs real, p_y text, p_ys real, p_z text, p_zs real, p_limit integer)
 RETURNS text[]
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_seqscan TO 'off'
 SET enable_indexscan TO 'off'
AS $function$
DECLARE
    keys text[];
BEGIN
    EXECUTE lb_search_triple_sql(d, b, p_x, p_xs, p_y, p_ys, p_z, p_zs, p_limit) INTO keys;
    RETURN keys;
END
$function$;
