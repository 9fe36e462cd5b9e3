-- lb_search_pair_span: how many postings of word p_x at score p_xs and of
-- word p_y at score p_ys (two plateaus, lb_search_plateaus) lie between the
-- larger of the two plateaus' first keys and the smaller of their last
-- (lb_search_pair_bounds), the only keys a Record holding both can
-- have, each counted up to p_cap (a range of the rank index read at most
-- p_cap rows deep), and the one that reached p_cap further, up to one more
-- than 8 times the other's count, when that decides which is 8 times
-- smaller. lb_search_pairs compares them to choose between a merge of the
-- two ranges and a probe per Record of the smaller: two plateaus of
-- 100,000 postings may share a few hundred keys' span, as a word of
-- Supplier names (gmbh: Supplier keys only) beside a word of every Kind,
-- and a plateau of 890 postings (trading's best) beside one of 329,660
-- (bolt's) is probed, not merged, though both pass 4,096 / 8.
CREATE OR REPLACE FUNCTION lb_search_pair_span(d integer, b integer, p_x text, p_xs real, p_y text, p_ys real, p_cap integer, OUT nx integer, OUT ny integer)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    lo text;
    hi text;
BEGIN
    SELECT z.lo, z.hi INTO lo, hi FROM lb_search_pair_bounds(d, b, p_x, p_xs, p_y, p_ys) z;
    IF lo IS NULL THEN
        nx := 0;
        ny := 0;
        RETURN;
    END IF;
    nx := lb_search_plateau_count(d, b, p_x, p_xs, lo, hi, p_cap);
    ny := lb_search_plateau_count(d, b, p_y, p_ys, lo, hi, p_cap);
    IF nx >= p_cap AND ny < p_cap AND ny::bigint * 8 >= p_cap THEN
        nx := lb_search_plateau_count(d, b, p_x, p_xs, lo, hi, ny * 8 + 1);
    ELSIF ny >= p_cap AND nx < p_cap AND nx::bigint * 8 >= p_cap THEN
        ny := lb_search_plateau_count(d, b, p_y, p_ys, lo, hi, nx * 8 + 1);
    END IF;
END
$function$;
