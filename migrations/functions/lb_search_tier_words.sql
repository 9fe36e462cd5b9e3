-- lb_search_tier_words: the words of p_w (a query of three terms, one word
-- each) whose second tier of partial matches lb_search_tier_pairs reads
-- from the pairs of their score plateaus, or NULL when the postings walk
-- (lb_search_tiers) reads it for fewer pages. The words are those some
-- Record of branch b holds (the lexicon's counts; a word no Record holds
-- meets no other, so with one such word the tier is the other two words'
-- meeting: one pair, not three), in the order of p_w; NULL when fewer
-- than two are held, or when no two of them are expected to meet (by
-- their counts over p_records Records, were they independent) in p_min
-- Records or more: the walk reads the meeting of two words expected in
-- fewer than 8 × search_candidates Records whole from the GIN index,
-- which for a few thousand Records costs fewer pages than listing,
-- counting and probing the words' plateaus (the caller's p_min, 7 ×
-- search_candidates, measured at 100k and 1M). A branch that keeps no
-- counters (p_records 0 or NULL) takes the pairs. Each word's count by
-- the lexicon's primary key, as lb_search_present reads it. PL/pgSQL, so
-- that its statement's plan is kept for the session (an SQL function with
-- a SET clause is planned again in every transaction that calls it).
CREATE OR REPLACE FUNCTION lb_search_tier_words(d integer, b integer, p_w text[], p_records bigint, p_min double precision)
 RETURNS text[]
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    RETURN (
        SELECT CASE WHEN count(*) >= 2 AND (coalesce(p_records, 0) <= 0
                         OR max(x.n) * (min(x.n) FILTER (WHERE x.r = 2)) / p_records::double precision >= p_min)
                    THEN array_agg(x.w ORDER BY x.o) END
          FROM (SELECT y.w, y.o, y.n::double precision AS n, row_number() OVER (ORDER BY y.n DESC, y.o) AS r
                  FROM (SELECT u.w, u.o, (SELECT l.records FROM mat_lexicon l
                                           WHERE l.domain_id = d AND l.branch_id = b AND l.word = u.w) AS n
                          FROM unnest(p_w) WITH ORDINALITY u(w, o)) y
                 WHERE y.n > 0) x);
END
$function$;
