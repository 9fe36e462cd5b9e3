-- lb_search_triple_merge: lb_search_triple_sql run with hash joins, nested
-- loops, bitmap scans, sorts and memoize off: the two smaller plateaus
-- merged in key order as the rank index holds them, the third probed once
-- per Record both hold (the lateral subquery's nested loop; each key comes
-- once, nothing to cache).
CREATE OR REPLACE FUNCTION lb_search_triple_merge(d integer, b integer, p_x text, p_xs real, p_y text, p_ys real, p_z text, p_zs real, p_limit integer)
 RETURNS text[]
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_hashjoin TO 'off'
 SET enable_nestloop TO 'off'
 SET enable_bitmapscan TO 'off'
 SET enable_sort TO 'off'
 SET enable_memoize TO 'off'
AS $function$
DECLARE
    keys text[];
BEGIN
    EXECUTE lb_search_triple_sql(d, b, p_x, p_xs, p_y, p_ys, p_z, p_zs, p_limit) INTO keys;
    RETURN keys;
END
$function$;
