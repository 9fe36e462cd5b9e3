-- lb_rec_prepared: the rows of the statement q (a read's statement of the
-- form lb_rec_overlay_page_stmt builds: key, kind, title, values,
-- revision) with $1 = v and $2 = a, through a prepared statement of the
-- session named after q's md5, prepared on its first use, so that its
-- plan is built once (a generic plan: plan_cache_mode) and not on every
-- call as EXECUTE of a statement text would.
--
-- The session's registry of the names prepared here (the setting
-- lorebase.rec_prepared: their md5s) spares the catalog on every call
-- after the first: a registered name is executed at once. A name not
-- registered, or whose statement is gone (deallocated by someone else),
-- is looked up in pg_prepared_statements
-- (which lists every statement of the session with its text, 1 to 1.5 ms
-- with pgx's 512), replaced when its text is not q's (prepared by
-- someone else), prepared when missing, and registered. At most 64 of
-- these are kept a session: past that they are all deallocated and the
-- registry emptied.
--
-- The registry is the session's, as the statements are: a statement put
-- under a registered name after it was registered (DEALLOCATE, then
-- PREPARE, on the connection) is run, as the caller; the read functions
-- issue no such statement.
CREATE OR REPLACE FUNCTION lb_rec_prepared(q text, v text, a text)
 RETURNS TABLE(key text, kind text, title text, "values" jsonb, revision text)
 LANGUAGE plpgsql
 SET search_path TO 'public', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    h text := md5(q);
    n text := 'lb_rec_' || h;
    p text;
    s text;
    reg text := coalesce(current_setting('lorebase.rec_prepared', true), '');
BEGIN
    IF strpos(reg, h) > 0 THEN
        BEGIN
            RETURN QUERY EXECUTE format('EXECUTE %I(%L, %L)', n, v, a);
            RETURN;
        EXCEPTION WHEN invalid_sql_statement_name OR syntax_error THEN
            -- Deallocated by someone else (RETURN QUERY of an EXECUTE
            -- whose statement is gone raises syntax_error: it does not
            -- return tuples): looked up and prepared again below, where
            -- any other error is raised again.
            NULL;
        END;
    END IF;
    p := format('PREPARE %I(text, text) AS %s', n, q);
    SELECT ps.statement INTO s FROM pg_prepared_statements ps WHERE ps.name = n;
    IF s IS DISTINCT FROM p THEN
        IF s IS NOT NULL THEN
            EXECUTE format('DEALLOCATE %I', n);
        ELSIF (SELECT count(*) FROM pg_prepared_statements ps WHERE ps.name LIKE 'lb\_rec\_%') >= 64 THEN
            FOR s IN SELECT ps.name FROM pg_prepared_statements ps WHERE ps.name LIKE 'lb\_rec\_%' LOOP
                EXECUTE format('DEALLOCATE %I', s);
            END LOOP;
            reg := '';
        END IF;
        EXECUTE p;
    END IF;
    reg := replace(reg, h, '');
    IF length(reg) > 64 * 33 THEN
        -- Names deallocated by someone else pile up: forget them.
        reg := '';
    END IF;
    PERFORM set_config('lorebase.rec_prepared', ltrim(regexp_replace(reg, ' +', ' ', 'g') || ' ' || h), false);
    RETURN QUERY EXECUTE format('EXECUTE %I(%L, %L)', n, v, a);
END
$function$;
