-- lb_scope_branch resolves a branch of the Domain in scope.
CREATE OR REPLACE FUNCTION lb_scope_branch(p_branch text, OUT o_domain integer, OUT o_branch integer, OUT o_head bigint)
 RETURNS record
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    o_domain := lb_domain();
    IF o_domain IS NULL THEN
        RAISE EXCEPTION 'no Domain in scope' USING ERRCODE = '42501';
    END IF;
    SELECT r.id, r.head_seq INTO o_branch, o_head
      FROM refs r
     WHERE r.domain_id = o_domain AND r.name = p_branch AND r.state <> 'deleting';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'branch not found' USING ERRCODE = 'P0002';
    END IF;
END
$function$;
