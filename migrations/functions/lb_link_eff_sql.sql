CREATE OR REPLACE FUNCTION lb_link_eff_sql(d integer, bs integer[], cs bigint[], hs bigint[], f text, rel text, t text)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
    s text := '';
    i int;
BEGIN
    IF cardinality(bs) = 1 THEN
        RETURN '(' || lb_link_say_sql(d, 1, bs[1], cs[1], cs[1] >= hs[1], f, rel, t) || ')';
    END IF;
    FOR i IN 1..cardinality(bs) LOOP
        s := s || CASE WHEN i > 1 THEN E'\n UNION ALL\n' ELSE '' END
               || '(' || lb_link_say_sql(d, i, bs[i], cs[i], cs[i] >= hs[i], f, rel, t) || ')';
    END LOOP;
    RETURN format('(SELECT * FROM (%s) s ORDER BY s.lvl LIMIT 1)', s);
END
$function$;
