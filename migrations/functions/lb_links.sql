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
        PERFORM lb_require_record(c.d, c.b, p_key, NULL);
        RETURN QUERY EXECUTE lb_links_sql_single(p_branch, p_key, p_direction, p_relation, NULL);
        RETURN;
    END IF;
    lv_domain := c.d;
    lv_branches := c.bs;
    lv_cuts := lb_level_cuts(c.cs, c.hs);
    SELECT EXISTS (SELECT 1 FROM (
            SELECT CASE WHEN r.seq <= l.c THEN NOT r.deleted ELSE h.op <> 'delete' END AS present
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_records r ON r.domain_id = lv_domain AND r.branch_id = l.b AND r.key = lv_key COLLATE "C"
              LEFT JOIN LATERAL (SELECT h.op, h.seq FROM mat_history h
                     WHERE r.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.key = r.key AND h.seq <= l.c
                     ORDER BY h.seq DESC LIMIT 1) h ON true
             WHERE r.seq <= l.c OR h.seq IS NOT NULL
             ORDER BY l.lvl LIMIT 1) e
     WHERE e.present)
      INTO ok;
    IF NOT ok THEN
        RAISE EXCEPTION 'record not found' USING ERRCODE = 'P0002';
    END IF;
    RETURN QUERY
    SELECT y.relation, y.from_key, y.to_key, CASE y.origin WHEN 'r' THEN 'ref' ELSE 'link' END
      FROM (SELECT z.relation::text, z.from_key::text, z.to_key::text, z.origin
              FROM (SELECT DISTINCT o.relation, o.to_key AS other
                      FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
                      JOIN mat_links o ON o.domain_id = lv_domain AND o.branch_id = l.b AND o.from_key = lv_key COLLATE "C"
                       AND (NOT o.deleted OR o.seq > l.c)
                     WHERE lv_dir <> 'in' AND (lv_rel = '' OR o.relation = lv_rel COLLATE "C")) k
             CROSS JOIN LATERAL (
                    SELECT CASE WHEN s.seq <= l.c THEN NOT s.deleted ELSE h.op = 'link' END AS present,
                           s.from_key, s.relation, s.to_key, CASE WHEN s.seq <= l.c THEN s.origin ELSE h.origin END AS origin
                      FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
                      JOIN mat_links s ON s.domain_id = lv_domain AND s.branch_id = l.b
                       AND s.from_key = lv_key COLLATE "C" AND s.relation = k.relation AND s.to_key = k.other
                      LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                             WHERE s.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.from_key = s.from_key
                               AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= l.c
                             ORDER BY h.seq DESC LIMIT 1) h ON true
                     WHERE s.seq <= l.c OR h.op IS NOT NULL
                     ORDER BY l.lvl LIMIT 1) z
             WHERE z.present
            UNION
            SELECT z.relation::text, z.from_key::text, z.to_key::text, z.origin
              FROM (SELECT DISTINCT o.relation, o.from_key AS other
                      FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
                      JOIN mat_links o ON o.domain_id = lv_domain AND o.branch_id = l.b AND o.to_key = lv_key COLLATE "C"
                       AND (NOT o.deleted OR o.seq > l.c)
                     WHERE lv_dir <> 'out' AND (lv_rel = '' OR o.relation = lv_rel COLLATE "C")) k
             CROSS JOIN LATERAL (
                    SELECT CASE WHEN s.seq <= l.c THEN NOT s.deleted ELSE h.op = 'link' END AS present,
                           s.from_key, s.relation, s.to_key, CASE WHEN s.seq <= l.c THEN s.origin ELSE h.origin END AS origin
                      FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
                      JOIN mat_links s ON s.domain_id = lv_domain AND s.branch_id = l.b
                       AND s.from_key = k.other AND s.relation = k.relation AND s.to_key = lv_key COLLATE "C"
                      LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                             WHERE s.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.from_key = s.from_key
                               AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= l.c
                             ORDER BY h.seq DESC LIMIT 1) h ON true
                     WHERE s.seq <= l.c OR h.op IS NOT NULL
                     ORDER BY l.lvl LIMIT 1) z
             WHERE z.present) y
     ORDER BY 1, 2, 3;
END
$function$;
