-- lb_search_pair_probe: the meeting of two plateaus as lb_search_pair_sql
-- reads it, as a nested loop over p_x's plateau (the smaller), one index
-- probe of p_y's posting per Record (lb_search_pair_probe_sql).
CREATE OR REPLACE FUNCTION lb_search_pair_probe(d integer, b integer, p_x text, p_xs real, p_y text, p_ys real, p_limit integer)
 RETURNS text[]
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_mergejoin TO 'off'
 SET enable_hashjoin TO 'off'
AS $function$
DECLARE
    keys text[];
    lo text;
    hi text;
BEGIN
    SELECT z.lo, z.hi INTO lo, hi FROM lb_search_pair_bounds(d, b, p_x, p_xs, p_y, p_ys) z;
    IF lo IS NULL THEN
        RETURN '{}';
    END IF;
    EXECUTE lb_search_pair_probe_sql(d, b, p_x, p_xs, p_y, p_ys, p_limit, quote_literal(lo), quote_literal(hi)) INTO keys;
    RETURN keys;
END
$function$;
