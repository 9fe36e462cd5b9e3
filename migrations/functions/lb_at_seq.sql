-- lb_at_seq resolves the Revision of at= to its seq: NULL for none (the
-- head). The Revision must be one of the branch's levels (following every
-- base) at or before that level's cut: a Revision of the branch, or of an
-- ancestor at or before the fork.
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
BEGIN
    IF p_revision IS NULL OR p_revision = '' THEN
        RETURN NULL;
    END IF;
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    SELECT r.seq, r.branch_id INTO s, rb FROM revisions r WHERE r.domain_id = d AND r.id = p_revision;
    IF FOUND THEN
        SELECT * INTO lv FROM lb_levels(d, b, h, true);
        IF EXISTS (SELECT 1 FROM generate_series(1, cardinality(lv.bs)) i WHERE lv.bs[i] = rb AND s <= lv.cs[i]) THEN
            RETURN s;
        END IF;
    END IF;
    RAISE EXCEPTION 'revision not found' USING ERRCODE = 'P0002';
END
$function$;
