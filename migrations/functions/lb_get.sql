CREATE OR REPLACE FUNCTION lb_get(p_branch text, p_key text, p_at bigint DEFAULT NULL::bigint)
 RETURNS TABLE(key text, kind text, title text, "values" jsonb, revision text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
DECLARE
    c record;
    lv_domain int;
    lv_branches int[];
    lv_cuts bigint[];
    lv_key text := p_key;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF c.single THEN
        RETURN QUERY EXECUTE lb_get_sql_single(p_branch, p_key, NULL);
        RETURN;
    END IF;
    lv_domain := c.d;
    lv_branches := c.bs;
    lv_cuts := lb_level_cuts(c.cs, c.hs);
    RETURN QUERY
    /* levels:get */
    SELECT e.key, e.kind, e.title, e."values", rv.id
      FROM lb_record_at(lv_domain, lv_branches, lv_cuts, lv_key) e
      LEFT JOIN revisions rv ON rv.domain_id = lv_domain AND rv.seq = e.seq
     WHERE e.present
    /* end levels */;
END
$function$;
