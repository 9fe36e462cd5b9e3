-- lb_search_swaps: the words made from w by swapping two adjacent letters
-- that differ ("vavle": "avvle", "vvale", "valve", "vavel"), the
-- corrections lb_search_terms and lb_search_terms_levels look up first.
-- At most 63 (the first 64 characters of w); none for a word shorter than
-- two characters.
CREATE OR REPLACE FUNCTION lb_search_swaps(w text)
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
SELECT coalesce(array_agg(left(v.w, i - 1) || substr(v.w, i + 1, 1) || substr(v.w, i, 1) || substr(v.w, i + 2) ORDER BY i), '{}')
  FROM (SELECT left(coalesce(w, ''), 64) AS w) v
 CROSS JOIN generate_series(1, length(v.w) - 1) i
 WHERE substr(v.w, i, 1) <> substr(v.w, i + 1, 1)
$function$;
