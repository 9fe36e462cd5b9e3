-- lb_search_plateau_sizes: the sizes of word w's plateaus s (best first)
-- as lb_search_pairs reads them: each counted up to p_count, the best ones
-- while they hold at most p_small postings together, and NULL past the
-- first that does not fit (counted when a pair needs it); top is the
-- number of best plateaus that fit.
CREATE OR REPLACE FUNCTION lb_search_plateau_sizes(d integer, b integer, w text, s real[], p_small integer, p_count integer, OUT sizes integer[], OUT top integer)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    held int := 0;
    cnt int;
BEGIN
    sizes := array_fill(NULL::int, ARRAY[cardinality(s)]);
    top := 0;
    FOR i IN 1..cardinality(s) LOOP
        cnt := lb_search_plateau_count(d, b, w, s[i], greatest(p_small - held, p_count) + 1);
        sizes[i] := least(cnt, p_count);
        EXIT WHEN held + cnt > p_small;
        held := held + cnt;
        top := i;
    END LOOP;
END
$function$;
