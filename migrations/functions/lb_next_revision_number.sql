-- lb_next_revision_number draws the next Revision number of the Domain in
-- scope from the Domain's own sequence (revision_number_<id>), creating it
-- on the Domain's first Revision. Numbers are per Domain: they never show
-- another Domain's writes. A rolled-back commit leaves a gap in its own
-- Domain's numbers only.
CREATE OR REPLACE FUNCTION lb_next_revision_number()
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    d int := lb_domain();
    s text;
BEGIN
    IF d IS NULL THEN
        RAISE EXCEPTION 'no Domain in scope' USING ERRCODE = '42501';
    END IF;
    s := 'revision_number_' || d;
    IF to_regclass(format('%I', s)) IS NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('lb_next_revision_number'), d);
        EXECUTE format('CREATE SEQUENCE IF NOT EXISTS %I AS bigint MINVALUE 1', s);
    END IF;
    RETURN nextval(format('%I', s)::regclass);
END
$function$;
