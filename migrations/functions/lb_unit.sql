-- lb_unit scales a vector to unit length (a zero vector stays zero).
CREATE OR REPLACE FUNCTION lb_unit(v real[])
 RETURNS real[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
SELECT CASE WHEN n > 0 THEN (SELECT array_agg((x / n)::real ORDER BY i) FROM unnest(v) WITH ORDINALITY u(x, i)) ELSE v END
  FROM (SELECT sqrt(sum(x::float8 * x::float8)) AS n FROM unnest(v) x) s
$function$;
