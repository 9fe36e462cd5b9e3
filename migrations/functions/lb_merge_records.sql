-- lb_merge_records: the effective, present Records among p_keys of branch
-- p_branch at its head (p_at NULL) or as of seq p_at, with the branch and
-- seq of the row that says so. Levels read at their head answer with one
-- index scan for all their keys (a row there, a tombstone included,
-- settles its key); only the keys left go on to the levels below, one
-- lookup per key and level.
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
    rest text[] := p_keys;
    i int := 1;
BEGIN
    IF d IS NULL THEN
        RAISE EXCEPTION 'no Domain in scope' USING ERRCODE = '42501';
    END IF;
    SELECT r.head_seq INTO h FROM refs r WHERE r.domain_id = d AND r.id = p_branch;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'branch not found' USING ERRCODE = 'P0002';
    END IF;
    SELECT * INTO bs, cs, hs FROM lb_levels(d, p_branch, coalesce(p_at, h), p_at IS NOT NULL);
    WHILE i <= cardinality(bs) AND cs[i] >= hs[i] AND cardinality(rest) > 0 LOOP
        RETURN QUERY EXECUTE format($q$SELECT m.key::text, m.kind::text, m."values", m.branch_id, m.seq
  FROM mat_records m
 WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = ANY ($1) AND NOT m.deleted$q$, d, bs[i]) USING rest;
        IF i = cardinality(bs) THEN
            RETURN;
        END IF;
        EXECUTE format($q$SELECT coalesce(array_agg(k), '{}') FROM unnest($1::text[]) k
 WHERE NOT EXISTS (SELECT 1 FROM mat_records m WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = k COLLATE "C")$q$,
                       d, bs[i]) INTO rest USING rest;
        i := i + 1;
    END LOOP;
    IF cardinality(rest) = 0 OR i > cardinality(bs) THEN
        RETURN;
    END IF;
    RETURN QUERY EXECUTE format($q$SELECT e.key::text, e.kind::text, e."values", e.branch_id::int, e.seq
  FROM (SELECT DISTINCT k COLLATE "C" AS key FROM unnest($1::text[]) k) q
 CROSS JOIN LATERAL %1$s e
 WHERE e.present$q$, lb_rec_eff_sql(d, bs[i:], cs[i:], hs[i:], 'q.key')) USING rest;
END
$function$;
