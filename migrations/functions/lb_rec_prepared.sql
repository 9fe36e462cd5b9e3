-- lb_rec_prepared: the rows of the statement q (a read's statement of the
-- form lb_rec_overlay_page_stmt builds: key, kind, title, values,
-- revision) with $1 = v and $2 = a, through a prepared statement of the
-- session named after q's md5, prepared on its first use, so that its
-- plan is built once (a generic plan: plan_cache_mode) and not on every
-- call as EXECUTE of a statement text would. A statement of that name
-- whose text is not q's (prepared by someone else) is replaced. At most
-- 64 of these are kept a session: past that they are all deallocated.
CREATE OR REPLACE FUNCTION lb_rec_prepared(q text, v text, a text)
 RETURNS TABLE(key text, kind text, title text, "values" jsonb, revision text)
 LANGUAGE plpgsql
 SET search_path TO 'public', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    n text := 'lb_rec_' || md5(q);
    p text := format('PREPARE %I(text, text) AS %s', n, q);
    s text;
BEGIN
    SELECT ps.statement INTO s FROM pg_prepared_statements ps WHERE ps.name = n;
    IF s IS DISTINCT FROM p THEN
        IF s IS NOT NULL THEN
            EXECUTE format('DEALLOCATE %I', n);
        ELSIF (SELECT count(*) FROM pg_prepared_statements ps WHERE ps.name LIKE 'lb\_rec\_%') >= 64 THEN
            FOR s IN SELECT ps.name FROM pg_prepared_statements ps WHERE ps.name LIKE 'lb\_rec\_%' LOOP
                EXECUTE format('DEALLOCATE %I', s);
            END LOOP;
        END IF;
        EXECUTE p;
    END IF;
    RETURN QUERY EXECUTE format('EXECUTE %I(%L, %L)', n, v, a);
END
$function$;
