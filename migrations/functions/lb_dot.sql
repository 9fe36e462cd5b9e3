-- lb_dot is the dot product of two vectors of the same length: cosine
-- similarity of unit vectors. A PL/pgSQL loop over the subscripts: measured
-- about twice as fast per row as sum() over unnest() or generate_series().
CREATE OR REPLACE FUNCTION lb_dot(a real[], b real[])
 RETURNS double precision
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
DECLARE
    s double precision := 0;
    k int;
BEGIN
    FOR k IN 1..cardinality(a) LOOP
        s := s + a[k] * b[k];
    END LOOP;
    RETURN s;
END
$function$;
