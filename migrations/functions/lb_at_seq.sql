-- lb_at_seq resolves the Revision of at= to its seq: NULL for none (the
-- head). The Revision must be one of the branch's levels (following every
-- base) at or before that level's cut: a Revision of the branch, or of an
-- ancestor at or before the fork. A read as of a Revision replays the
-- changes made since it, so the changes after it on the levels are bounded:
-- past lorebase.at_max_changes (read.at_max_changes) it raises LB001.
CREATE OR REPLACE FUNCTION lb_at_seq(p_branch text, p_revision text)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    d int;
    b int;
    h bigint;
    s bigint;
    rb int;
    lv record;
    lim bigint := coalesce(nullif(current_setting('lorebase.at_max_changes', true), '')::bigint, 100000);
    n bigint := 0;
    k int;
    i int;
BEGIN
    IF p_revision IS NULL OR p_revision = '' THEN
        RETURN NULL;
    END IF;
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    SELECT r.seq, r.branch_id INTO s, rb FROM revisions r WHERE r.domain_id = d AND r.id = p_revision;
    IF FOUND THEN
        SELECT * INTO lv FROM lb_levels(d, b, h, true);
        IF EXISTS (SELECT 1 FROM generate_series(1, cardinality(lv.bs)) x WHERE lv.bs[x] = rb AND s <= lv.cs[x]) THEN
            FOR i IN 1..cardinality(lv.bs) LOOP
                FOR k IN SELECT jsonb_array_length(r.changes) FROM revisions r
                          WHERE r.domain_id = d AND r.branch_id = lv.bs[i] AND r.seq > s AND r.seq <= lv.cs[i]
                          ORDER BY r.seq DESC LOOP
                    n := n + k;
                    IF n > lim THEN
                        RAISE EXCEPTION 'more than % changes were made since Revision %', lim, p_revision USING ERRCODE = 'LB001';
                    END IF;
                END LOOP;
            END LOOP;
            RETURN s;
        END IF;
    END IF;
    RAISE EXCEPTION 'revision not found' USING ERRCODE = 'P0002';
END
$function$;
