-- lb_merge_records: the effective, present Records among p_keys of branch
-- p_branch at its head (p_at NULL) or as of seq p_at, with the branch and
-- seq of the row that says so.
CREATE OR REPLACE FUNCTION lb_merge_records(p_branch integer, p_at bigint, p_keys text[])
 RETURNS TABLE(key text, kind text, "values" jsonb, branch_id integer, seq bigint)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    d int := lb_domain();
    h bigint;
    bs int[];
    cs bigint[];
    hs bigint[];
BEGIN
    IF d IS NULL THEN
        RAISE EXCEPTION 'no Domain in scope' USING ERRCODE = '42501';
    END IF;
    SELECT r.head_seq INTO h FROM refs r WHERE r.domain_id = d AND r.id = p_branch;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'branch not found' USING ERRCODE = 'P0002';
    END IF;
    SELECT * INTO bs, cs, hs FROM lb_levels(d, p_branch, coalesce(p_at, h), p_at IS NOT NULL);
    RETURN QUERY EXECUTE format($q$SELECT e.key::text, e.kind::text, e."values", e.branch_id::int, e.seq
  FROM (SELECT DISTINCT k COLLATE "C" AS key FROM unnest($1::text[]) k) q
 CROSS JOIN LATERAL %1$s e
 WHERE e.present$q$, lb_rec_eff_sql(d, bs, cs, hs, 'q.key')) USING p_keys;
END
$function$;
