-- lb_search_swaps: the words made from w by swapping two adjacent letters
-- that differ ("vavle": "avvle", "vvale", "valve", "vavel"), the
-- corrections lb_search_terms and lb_search_terms_levels look up first.
-- At most 63 (from the first 64 characters of w); none for a word shorter
-- than two characters. PL/pgSQL expressions, no statement: nothing is
-- planned per call.
CREATE OR REPLACE FUNCTION lb_search_swaps(w text)
 RETURNS text[]
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
AS $function$
DECLARE
    v text := left(coalesce(w, ''), 64);
    r text[] := '{}';
    i int;
BEGIN
    FOR i IN 1..length(v) - 1 LOOP
        IF substr(v, i, 1) <> substr(v, i + 1, 1) THEN
            r := r || (left(v, i - 1) || substr(v, i + 1, 1) || substr(v, i, 1) || substr(v, i + 2));
        END IF;
    END LOOP;
    RETURN r;
END
$function$;
