-- lb_rec_cands_sql: candidate keys greater than after from every level,
-- as one UNION ALL of ordered arms (Merge Append in key order): the
-- level's rows matching pred (present, or
-- changed after its cut) and, when filtered (pred on Kind or values) and
-- the level is read before its head, the keys it changed after the cut. A
-- key comes at most once per arm, and there are at most two arms per
-- level: callers take 2 * levels * limit resolved rows, then each key once
-- (a DISTINCT over the stream is estimated at 200 rows and makes the
-- planner read every candidate). Each arm is planned on its own; its
-- non-constant LIMIT (NULL: none) makes the planner plan it for a fraction
-- of its rows, so it reads an index in key order instead of sorting the
-- whole range. (Flattened arms of the partitioned table do not get merged
-- index scans.)
CREATE OR REPLACE FUNCTION lb_rec_cands_sql(d integer, bs integer[], cs bigint[], hs bigint[], pred text, filtered boolean, after text)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    s text := '';
    i int;
BEGIN
    FOR i IN 1..cardinality(bs) LOOP
        s := s || CASE WHEN i > 1 THEN E'\n UNION ALL\n' ELSE '' END
             || format('(SELECT m.key FROM mat_records m WHERE m.domain_id = %L AND m.branch_id = %L%s AND m.key > %L AND (NOT m.deleted OR m.seq > %L) ORDER BY m.key LIMIT (SELECT NULL::bigint))',
                       d, bs[i], pred, coalesce(after, ''), cs[i]);
        IF filtered AND cs[i] < hs[i] THEN
            s := s || E'\n UNION ALL\n(' || lb_changed_sql(d, bs[i], cs[i], after) || ' ORDER BY 1)';
        END IF;
    END LOOP;
    RETURN '(' || s || ')';
END
$function$;
