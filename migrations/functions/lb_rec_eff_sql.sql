-- lb_rec_eff_sql: the effective Record of key expression k over the
-- levels, as a parenthesized subquery of at most one row (columns of
-- lb_rec_say_sql; present false: absent). Use it as
-- CROSS JOIN LATERAL <it> e ... WHERE e.present.
CREATE OR REPLACE FUNCTION lb_rec_eff_sql(d integer, bs integer[], cs bigint[], hs bigint[], k text)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    s text := '';
    i int;
BEGIN
    IF cardinality(bs) = 1 THEN
        RETURN '(' || lb_rec_say_sql(d, 1, bs[1], cs[1], cs[1] >= hs[1], k) || ')';
    END IF;
    FOR i IN 1..cardinality(bs) LOOP
        s := s || CASE WHEN i > 1 THEN E'\n UNION ALL\n' ELSE '' END
               || '(' || lb_rec_say_sql(d, i, bs[i], cs[i], cs[i] >= hs[i], k) || ')';
    END LOOP;
    RETURN format('(SELECT * FROM (%s) s ORDER BY s.lvl LIMIT 1)', s);
END
$function$;
