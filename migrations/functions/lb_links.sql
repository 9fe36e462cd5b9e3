CREATE OR REPLACE FUNCTION lb_links(p_branch text, p_key text, p_direction text, p_relation text, p_at bigint DEFAULT NULL::bigint)
 RETURNS TABLE(relation text, from_key text, to_key text, origin text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
DECLARE
    c record;
    ok boolean;
    lv_domain int;
    lv_branches int[];
    lv_cuts bigint[];
    lv_key text := p_key;
    lv_dir text := p_direction;
    lv_rel text := coalesce(p_relation, '');
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF p_direction IS NULL OR p_direction NOT IN ('out', 'in', 'both') THEN
        RAISE EXCEPTION 'direction must be out, in or both' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        PERFORM lb_require_record(c.b, p_key, NULL);
        RETURN QUERY EXECUTE lb_links_sql_single(p_branch, p_key, p_direction, p_relation, NULL);
        RETURN;
    END IF;
    lv_domain := c.d;
    lv_branches := c.bs;
    lv_cuts := lb_level_cuts(c.cs, c.hs);
    /* levels:present */
    SELECT EXISTS (SELECT 1 FROM lb_record_at(lv_domain, lv_branches, lv_cuts, lv_key) e WHERE e.present)
    /* end levels */
      INTO ok;
    IF NOT ok THEN
        RAISE EXCEPTION 'record not found' USING ERRCODE = 'P0002';
    END IF;
    RETURN QUERY
    /* levels:links */
    SELECT y.relation, y.from_key, y.to_key, CASE y.origin WHEN 'r' THEN 'ref' ELSE 'link' END
      FROM (SELECT DISTINCT x.relation, x.from_key, x.to_key, x.origin
              FROM lb_link_hop(lv_domain, lv_branches, lv_cuts, lv_key, lv_dir, lv_rel, NULL) x) y
     ORDER BY y.relation COLLATE "C", y.from_key COLLATE "C", y.to_key COLLATE "C"
    /* end levels */;
END
$function$;
