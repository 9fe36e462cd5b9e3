-- lb_scope_chain resolves a branch of the Domain in scope and its levels
-- at the head (p_at NULL) or as of seq p_at. single: one level read at its
-- head (the statements of 0002 apply).
CREATE OR REPLACE FUNCTION lb_scope_chain(p_branch text, p_at bigint, OUT d integer, OUT b integer, OUT bs integer[], OUT cs bigint[], OUT hs bigint[], OUT single boolean)
 RETURNS record
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    h bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    SELECT * INTO bs, cs, hs FROM lb_levels(d, b, coalesce(p_at, h), p_at IS NOT NULL);
    single := p_at IS NULL AND cardinality(bs) = 1;
END
$function$;
