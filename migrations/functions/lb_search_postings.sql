-- lb_search_postings: the best p_limit Records of branch b at its head for
-- a query of p_terms terms over the words p_words (each word's bit mask
-- p_masks names the terms it belongs to: a term is a word and its
-- corrections), in lb_search's order: the most terms matched first, then
-- ts_rank of the OR of the words, which is the sum of each matched word's
-- rank alone (its postings' score) over the number of words. Records
-- matching some of the terms are kept beside the full matches when
-- p_partial_min > 0 (the caller returns them only when fewer than
-- p_partial_min Records match every term, and the walk stops once it has
-- proved that many full matches and read every full match); otherwise
-- only Records matching every term are returned. With p_partial_only the
-- caller has read every full match itself (the GIN index, for a query
-- with a rare term): only partial matches are ranked.
--
-- The threshold algorithm over the words' postings (mat_search_words,
-- best first): each round reads the next postings of every word, scores
-- each new Record exactly from its postings of every word (primary key),
-- and stops when no Record not yet read can enter the best p_limit: an
-- unread Record holds each word with at most the score where that word's
-- list stands (nothing, once the list is read to its end), so it matches at
-- most the terms with a word left and scores at most the sum of their
-- words' current scores. Ties with that bound end the walk (tied Records
-- are interchangeable). A word of fewer than 128 postings by the
-- lexicon's count is read whole at once; the others 32 postings (at most
-- a sixteenth of p_budget) at a time, twice as many each round. When
-- p_budget Records were scored before the bound closed, or p_partial_budget
-- once only partial matches were left to rank (every full match read), the
-- walk stops with what it has and says truncated.
-- key, matched and score (the postings' sum) are the Records; ranked (the
-- Records scored) and truncated repeat on every row, and one row with a
-- NULL key carries them when nothing matched.
CREATE OR REPLACE FUNCTION lb_search_postings(d integer, b integer, p_words text[], p_masks integer[], p_terms integer, p_limit integer, p_partial_min integer, p_budget integer, p_partial_only boolean DEFAULT false, p_partial_budget integer DEFAULT NULL::integer)
 RETURNS TABLE(key text, matched integer, score double precision, ranked integer, truncated boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    m int := cardinality(p_words);
    all_terms int := (1 << p_terms) - 1;
    last_s real[];
    last_k text[];
    done boolean[];
    want int[];
    chunk int := least(32, greatest(p_budget / 16, 8));
    whole int := least(128, p_budget);
    top int;
    tiers_from int := CASE WHEN p_partial_only THEN 0 END;
    ks text[];
    ss real[];
    fresh text[];
    pool_k text[] := '{}';
    pool_c int[] := '{}';
    pool_s double precision[] := '{}';
    n_scored int := 0;
    i int;
    t int;
    live int;
    tb double precision[];
    bound double precision;
    kth_c int;
    kth_s double precision;
    full_n int;
    capped boolean := false;
    partial boolean := (coalesce(p_partial_min, 0) > 0 OR p_partial_only) AND p_terms > 1;
BEGIN
    IF m = 0 OR p_terms < 1 OR p_terms > 30 THEN
        RAISE EXCEPTION 'lb_search_postings: % words, % terms', m, p_terms USING ERRCODE = '22023';
    END IF;
    last_s := array_fill('Infinity'::real, ARRAY[m]);
    last_k := array_fill(NULL::text, ARRAY[m]);
    done := array_fill(false, ARRAY[m]);
    -- A word of few postings is read whole at once (each word's count by
    -- the lexicon's primary key, as lb_search_present reads it).
    SELECT array_agg(CASE WHEN y.n < whole THEN y.n + 1 ELSE chunk END ORDER BY y.o)
      INTO want
      FROM (SELECT u.o, coalesce((SELECT l.records FROM mat_lexicon l
                                   WHERE l.domain_id = d AND l.branch_id = b AND l.word = u.w), 0) AS n
              FROM unnest(p_words) WITH ORDINALITY u(w, o)) y;
    LOOP
        fresh := '{}';
        FOR i IN 1..m LOOP
            CONTINUE WHEN done[i];
            SELECT w.keys, w.scores INTO ks, ss
              FROM lb_search_word_page(d, b, p_words[i], last_s[i], last_k[i], want[i]) w;
            IF cardinality(ks) < want[i] THEN
                done[i] := true;
            END IF;
            IF cardinality(ks) > 0 THEN
                last_s[i] := ss[cardinality(ss)];
                last_k[i] := ks[cardinality(ks)];
                fresh := fresh || ks;
            END IF;
            want[i] := least(greatest(chunk, want[i] * 2), 8192);
        END LOOP;
        -- Score the Records read this round from their postings of every
        -- word, and keep the best p_limit of every Record scored.
        IF cardinality(fresh) > 0 THEN
            WITH f AS (SELECT DISTINCT u.k FROM unnest(fresh) u(k) WHERE u.k <> ALL (pool_k)),
            sc AS (
                SELECT s.key AS k, bit_or(w.mask) AS mask, sum(s.score::double precision) AS sum_s
                  FROM f
                  JOIN mat_search_words s ON s.domain_id = d AND s.branch_id = b AND s.key = f.k AND s.word = ANY (p_words)
                  JOIN unnest(p_words, p_masks) w(word, mask) ON w.word = s.word
                 GROUP BY s.key),
            cand AS (
                SELECT sc.k, bit_count(sc.mask::bit(32))::int AS c, sc.sum_s FROM sc
                 WHERE CASE WHEN p_partial_only THEN sc.mask <> all_terms ELSE partial OR sc.mask = all_terms END
                UNION ALL
                SELECT * FROM unnest(pool_k, pool_c, pool_s)),
            best AS (
                SELECT * FROM cand ORDER BY cand.c DESC, cand.sum_s DESC, cand.k LIMIT p_limit)
            SELECT coalesce(array_agg(best.k ORDER BY best.c DESC, best.sum_s DESC, best.k), '{}'),
                   coalesce(array_agg(best.c ORDER BY best.c DESC, best.sum_s DESC, best.k), '{}'),
                   coalesce(array_agg(best.sum_s ORDER BY best.c DESC, best.sum_s DESC, best.k), '{}'),
                   (SELECT count(*) FROM f)::int
              INTO pool_k, pool_c, pool_s, i
              FROM best;
            n_scored := n_scored + i;
        END IF;
        -- The bound of an unread Record: the terms with a word left, each
        -- at most the sum of its words' current scores.
        tb := '{}';
        FOR t IN 0..p_terms - 1 LOOP
            SELECT sum(last_s[j]) INTO bound FROM generate_subscripts(p_words, 1) j
             WHERE NOT done[j] AND p_masks[j] & (1 << t) <> 0;
            IF bound IS NOT NULL THEN
                tb := tb || bound;
            END IF;
        END LOOP;
        live := cardinality(tb);
        top := CASE WHEN p_partial_only THEN least(live, p_terms - 1) ELSE live END;
        EXIT WHEN top = 0;
        -- Every full match is read once a term has no word left; without
        -- partial matches (or with enough full ones) that is the answer.
        full_n := (SELECT count(*) FROM unnest(pool_c) c WHERE c = p_terms);
        EXIT WHEN NOT p_partial_only AND live < p_terms AND (NOT partial OR full_n >= p_partial_min);
        IF live < p_terms AND tiers_from IS NULL THEN
            tiers_from := n_scored;
        END IF;
        SELECT sum(y.x) INTO bound FROM (SELECT x FROM unnest(tb) x ORDER BY x DESC LIMIT top) y;
        IF cardinality(pool_k) >= p_limit THEN
            kth_c := pool_c[p_limit];
            kth_s := pool_s[p_limit];
            EXIT WHEN kth_c > top OR (kth_c = top AND kth_s >= bound * (1 - 1e-6));
        END IF;
        IF n_scored >= p_budget OR n_scored - tiers_from >= p_partial_budget THEN
            capped := true;
            EXIT;
        END IF;
    END LOOP;
    ranked := n_scored;
    truncated := capped;
    IF cardinality(pool_k) = 0 THEN
        key := NULL;
        matched := NULL;
        score := NULL;
        RETURN NEXT;
        RETURN;
    END IF;
    FOR i IN 1..cardinality(pool_k) LOOP
        key := pool_k[i];
        matched := pool_c[i];
        score := pool_s[i];
        RETURN NEXT;
    END LOOP;
END
$function$;
