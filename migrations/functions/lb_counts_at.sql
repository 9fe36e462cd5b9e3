-- lb_counts_at is the number of present Records of each Kind (p_kind: that
-- Kind only, '' every Kind) on branch b of Domain d as of seq s (NULL: the
-- head), as a JSON object Kind -> count, from the counters the commits
-- keep (mat_counts, mat_count_changes). NULL when they cannot say: a
-- branch without a counter, a seq older than what its change rows cover,
-- or more than p_cap change rows to read back. As of a seq before a
-- branch's fork, the count is its base's as of that seq. SECURITY INVOKER:
-- branch creation calls it as lorebase_app; lb_count as the owner.
CREATE OR REPLACE FUNCTION lb_counts_at(d integer, b integer, s bigint, p_kind text, p_cap integer)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    r record;
    cur int := b;
    n int;
    kind_c text := '';
    kind_g text := '';
    out jsonb;
BEGIN
    IF coalesce(p_kind, '') <> '' THEN
        kind_c := format(' AND c.kind = %L', p_kind);
        kind_g := format(' AND g.kind = %L', p_kind);
    END IF;
    FOR i IN 1..64 LOOP
        SELECT x.counts_from, x.base_id, x.fork_seq, x.head_seq INTO r
          FROM refs x WHERE x.domain_id = d AND x.id = cur;
        IF NOT FOUND OR r.counts_from IS NULL THEN
            RETURN NULL;
        END IF;
        IF s IS NULL OR s >= r.head_seq THEN
            EXECUTE format($q$SELECT coalesce(jsonb_object_agg(c.kind, c.records), '{}') FROM mat_counts c
                WHERE c.domain_id = %L AND c.branch_id = %L%s$q$, d, cur, kind_c) INTO out;
            RETURN out;
        END IF;
        IF s >= r.counts_from THEN
            -- The head's counts less the changes of the Revisions after s,
            -- read once (at most p_cap + 1 of them: past p_cap, NULL).
            EXECUTE format($q$WITH g AS MATERIALIZED (
                    SELECT g.kind, g.delta FROM mat_count_changes g
                     WHERE g.domain_id = %1$L AND g.branch_id = %2$L AND g.seq > %3$L%4$s LIMIT %6$s)
                SELECT (SELECT count(*) FROM g)::int,
                       (SELECT coalesce(jsonb_object_agg(c.kind, c.records - coalesce(x.delta, 0)), '{}')
                          FROM mat_counts c
                          LEFT JOIN (SELECT g.kind, sum(g.delta) AS delta FROM g GROUP BY g.kind) x ON x.kind = c.kind
                         WHERE c.domain_id = %1$L AND c.branch_id = %2$L%5$s)$q$,
                d, cur, s, kind_g, kind_c, p_cap + 1) INTO n, out;
            IF n > p_cap THEN
                RETURN NULL;
            END IF;
            RETURN out;
        END IF;
        -- Before the branch's counts begin: its base's, if s is before
        -- the fork (the branch then read its base as of s).
        IF r.base_id IS NULL OR r.fork_seq IS NULL OR s >= r.fork_seq THEN
            RETURN NULL;
        END IF;
        cur := r.base_id;
    END LOOP;
    RETURN NULL;
END
$function$;
