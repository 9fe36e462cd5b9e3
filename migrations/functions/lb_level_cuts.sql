-- lb_level_cuts: the cuts of the levels, a level read at or past its head
-- (cut >= head_seq) getting the largest cut.
CREATE OR REPLACE FUNCTION lb_level_cuts(cs bigint[], hs bigint[])
 RETURNS bigint[]
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT coalesce(array_agg(CASE WHEN x.c >= x.h THEN 9223372036854775807 ELSE x.c END ORDER BY x.i), '{}')
  FROM unnest(cs, hs) WITH ORDINALITY x(c, h, i)
$function$;
