CREATE OR REPLACE FUNCTION lb_history_sql(p_branch text, p_key text, p_before bigint, p_limit integer)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
    arms text := '';
    i int;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10001 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_history_sql_single(p_branch, p_key, p_before, p_limit);
    END IF;
    FOR i IN 1..cardinality(c.bs) LOOP
        arms := arms || CASE WHEN i > 1 THEN E'\n UNION ALL\n' ELSE '' END
             || format($q$(SELECT %3$s AS lvl, h.* FROM mat_history h
         WHERE h.domain_id = %1$L AND h.branch_id = %2$L AND h.key = %4$L AND h.seq <= %5$L AND h.seq < %6$L
         ORDER BY h.seq DESC LIMIT %7$s)$q$, c.d, c.bs[i], i, p_key, c.cs[i],
                       coalesce(p_before, 9223372036854775807), p_limit);
    END LOOP;
    RETURN format($q$SELECT x.revision_id, x.seq, x.op, x."values", r.author, r.message, r.at, coalesce(x.provenance, r.provenance)
  FROM (SELECT DISTINCT ON (u.seq) u.* FROM (%2$s) u ORDER BY u.seq DESC, u.lvl LIMIT %3$s) x
  LEFT JOIN revisions r ON r.domain_id = %1$L AND r.seq = x.seq
 ORDER BY x.seq DESC$q$, c.d, arms, p_limit);
END
$function$;
