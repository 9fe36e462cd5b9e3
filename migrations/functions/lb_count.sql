-- lb_count is the exact number of present Records (of Kind p_kind; '' or
-- NULL: every Kind) on a branch of the Domain in scope, at its head (p_at
-- NULL) or as of seq p_at, from the counters the commits keep; NULL when
-- they cannot say it cheaply (lb_counts_at reads back at most 10,000
-- change rows), and the caller walks the Records instead.
CREATE OR REPLACE FUNCTION lb_count(p_branch text, p_kind text, p_at bigint DEFAULT NULL::bigint)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    d int;
    b int;
    h bigint;
    j jsonb;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    j := lb_counts_at(d, b, p_at, coalesce(p_kind, ''), 10000);
    IF j IS NULL THEN
        RETURN NULL;
    END IF;
    RETURN coalesce((SELECT sum(e.value::bigint) FROM jsonb_each_text(j) e), 0);
END
$function$;
