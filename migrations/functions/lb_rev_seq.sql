-- lb_rev_seq resolves a Revision id of the Domain (any branch) to its
-- sequence number; NULL for NULL or ''.
CREATE OR REPLACE FUNCTION lb_rev_seq(p_revision text)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    d int := lb_domain();
    s bigint;
BEGIN
    IF d IS NULL THEN
        RAISE EXCEPTION 'no Domain in scope' USING ERRCODE = '42501';
    END IF;
    IF p_revision IS NULL OR p_revision = '' THEN
        RETURN NULL;
    END IF;
    SELECT r.seq INTO s FROM revisions r WHERE r.domain_id = d AND r.id = p_revision;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'revision not found' USING ERRCODE = 'P0002';
    END IF;
    RETURN s;
END
$function$;
