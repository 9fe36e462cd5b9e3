-- lb_rec_upper_sql: a condition true when no level above level n has a say
-- about key expression k (so level n's row is the effective one).
CREATE OR REPLACE FUNCTION lb_rec_upper_sql(d integer, bs integer[], cs bigint[], hs bigint[], n integer, k text)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    s text := '';
    i int;
BEGIN
    FOR i IN 1..n - 1 LOOP
        IF cs[i] >= hs[i] THEN
            s := s || format(' AND NOT EXISTS (SELECT 1 FROM mat_records u WHERE u.domain_id = %L AND u.branch_id = %L AND u.key = %s)',
                             d, bs[i], k);
        ELSE
            s := s || format(' AND NOT EXISTS (%s)', lb_rec_say_sql(d, i, bs[i], cs[i], false, k));
        END IF;
    END LOOP;
    RETURN s;
END
$function$;
