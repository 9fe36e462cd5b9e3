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
    SELECT e.key::text, e.kind::text, e.title, e."values", rv.id
      FROM (SELECT CASE WHEN r.seq <= l.c THEN NOT r.deleted ELSE h.op <> 'delete' END AS present,
                   r.key,
                   CASE WHEN r.seq <= l.c THEN r.kind ELSE h.kind END AS kind,
                   CASE WHEN r.seq <= l.c THEN r.title ELSE h.title END AS title,
                   CASE WHEN r.seq <= l.c THEN r."values" ELSE h."values" END AS "values",
                   CASE WHEN r.seq <= l.c THEN r.seq ELSE h.seq END AS seq
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_records r ON r.domain_id = lv_domain AND r.branch_id = l.b AND r.key = lv_key COLLATE "C"
              LEFT JOIN LATERAL (SELECT h.op, h.kind, h.title, h."values", h.seq FROM mat_history h
                     WHERE r.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.key = r.key AND h.seq <= l.c
                     ORDER BY h.seq DESC LIMIT 1) h ON true
             WHERE r.seq <= l.c OR h.seq IS NOT NULL
             ORDER BY l.lvl LIMIT 1) e
      LEFT JOIN revisions rv ON rv.domain_id = lv_domain AND rv.seq = e.seq
     WHERE e.present;
END
$function$;
