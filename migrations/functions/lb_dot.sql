-- lb_dot is the dot product of two vectors of the same length: cosine
-- similarity of unit vectors.
CREATE OR REPLACE FUNCTION lb_dot(a real[], b real[])
 RETURNS double precision
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
SELECT sum(x::float8 * y::float8) FROM unnest(a, b) u(x, y)
$function$;
