CREATE OR REPLACE FUNCTION lb_links_sql_single(p_branch text, p_key text, p_direction text, p_relation text, p_at bigint DEFAULT NULL::bigint)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    d int;
    b int;
    h bigint;
    rel text := '';
    q_out text;
    q_in text;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_direction IS NULL OR p_direction NOT IN ('out', 'in', 'both') THEN
        RAISE EXCEPTION 'direction must be out, in or both' USING ERRCODE = '22023';
    END IF;
    IF coalesce(p_relation, '') <> '' THEN
        rel := format(' AND relation = %L', p_relation);
    END IF;
    IF p_at IS NULL THEN
        q_out := format($q$SELECT relation::text, from_key::text, to_key::text, origin FROM mat_links
 WHERE domain_id = %L AND branch_id = %L AND from_key = %L AND NOT deleted%s$q$, d, b, p_key, rel);
        q_in := format($q$SELECT relation::text, from_key::text, to_key::text, origin FROM mat_links
 WHERE domain_id = %L AND branch_id = %L AND to_key = %L AND NOT deleted%s$q$, d, b, p_key, rel);
    ELSE
        q_out := format($q$SELECT relation, from_key, to_key, origin FROM (
  SELECT DISTINCT ON (relation, to_key) relation::text, from_key::text, to_key::text, origin, op FROM mat_link_history
   WHERE domain_id = %L AND branch_id = %L AND from_key = %L AND seq <= %L%s
   ORDER BY relation, to_key, seq DESC) z WHERE op = 'link'$q$, d, b, p_key, p_at, rel);
        q_in := format($q$SELECT relation, from_key, to_key, origin FROM (
  SELECT DISTINCT ON (relation, from_key) relation::text, from_key::text, to_key::text, origin, op FROM mat_link_history
   WHERE domain_id = %L AND branch_id = %L AND to_key = %L AND seq <= %L%s
   ORDER BY relation, from_key, seq DESC) z WHERE op = 'link'$q$, d, b, p_key, p_at, rel);
    END IF;
    RETURN format($q$SELECT y.relation, y.from_key, y.to_key, CASE y.origin WHEN 'r' THEN 'ref' ELSE 'link' END
  FROM (%s) y
 ORDER BY 1, 2, 3$q$,
        CASE p_direction WHEN 'out' THEN q_out WHEN 'in' THEN q_in ELSE q_out || E'\nUNION\n' || q_in END);
END
$function$;
