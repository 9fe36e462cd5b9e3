-- lb_state_levels: the levels of branch p_branch at its head.
CREATE OR REPLACE FUNCTION lb_state_levels(p_branch integer, OUT d integer, OUT bs integer[], OUT cs bigint[], OUT hs bigint[])
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    h bigint;
BEGIN
    d := lb_domain();
    IF d IS NULL THEN
        RAISE EXCEPTION 'no Domain in scope' USING ERRCODE = '42501';
    END IF;
    SELECT r.head_seq INTO h FROM refs r WHERE r.domain_id = d AND r.id = p_branch;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'branch not found' USING ERRCODE = 'P0002';
    END IF;
    SELECT * INTO bs, cs, hs FROM lb_levels(d, p_branch, h, false);
END
$function$;
