-- lb_search_tiers: the partial matches of a query of p_terms terms (2 to
-- 6) over the words p_words (each word's bit mask p_masks names the terms
-- it belongs to: a term is a word and its corrections) on branch b at its
-- head, when the caller has read every full match: the best p_limit
-- Records matching some of the terms but not all, tier by tier (the most
-- terms matched first, then the sum of the matched words' postings scores,
-- which is ts_rank of the OR of the words times their number), exactly.
--
-- A Record matches exactly the terms of the union of its words' masks, its
-- combination. Each tier (the combinations of as many terms) is a
-- threshold algorithm over the postings (mat_search_words, best first) of
-- the words a Record of the tier's combinations may hold: a Record read
-- from one list is scored from its postings of every word (primary key)
-- and kept in its tier's best p_limit; an unread Record of combination S
-- holds only words whose mask is within S, each at most where that word's
-- list stands, and words covering every term of S, so it scores at most
-- the sum of the current scores of the lists not read to their end whose
-- masks are within S (none when those lists no longer cover S), or the
-- sum of each term's best current list score once the Records holding
-- two words of one term were read from the GIN index (when they are few).
-- A tier is done when its p_limit-th best reaches every open
-- combination's bound (ties end it: tied Records are interchangeable);
-- only the lists of the combinations still open are read. Lists are read
-- 32 postings at a time at first (a list of fewer than 128 postings by
-- the lexicon's count whole), twice as many each time. A combination of
-- two terms or more that meet in fewer Records than p_gin_max (the
-- lexicon's counts, p_records Records in the branch, the terms
-- independent) is read whole from the GIN index instead: every Record
-- holding its terms, scored from its search vector as its postings score
-- it (lb_search_tiers_gin_sql). When p_budget Records were scored before
-- every tier closed, the walk stops with what it has and says truncated.
-- key, matched and score (the postings' sum) are the Records, best first;
-- ranked (the Records scored) and truncated repeat on every row, and one
-- row with a NULL key carries them when nothing matched.
CREATE OR REPLACE FUNCTION lb_search_tiers(d integer, b integer, p_words text[], p_masks integer[], p_terms integer, p_limit integer, p_budget integer, p_gin_max bigint DEFAULT 0, p_records bigint DEFAULT NULL::bigint)
 RETURNS TABLE(key text, matched integer, score double precision, ranked integer, truncated boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    nw int := cardinality(p_words);
    all_terms int := (1 << p_terms) - 1;
    last_s real[];
    last_k text[];
    done boolean[];
    want int[];
    counts bigint[];
    chunk int := 32;
    ks text[];
    ss real[];
    fresh text[];
    pool_k text[] := '{}';
    pool_c int[] := '{}';
    pool_s double precision[] := '{}';
    out_k text[] := '{}';
    out_c int[] := '{}';
    out_s double precision[] := '{}';
    gin_done int[] := '{}';
    n_scored int := 0;
    capped boolean := false;
    need int := p_limit;
    tier int;
    combo int;
    i int;
    j int;
    cover int;
    bound double precision;
    kth double precision;
    kmax double precision;
    adv boolean[];
    any_open boolean;
    est double precision;
    q tsquery;
    tq tsquery[];
    one_each boolean := false;
    gk text[];
    gm int[];
    gs double precision[];
    several text;
BEGIN
    IF nw = 0 OR p_terms < 2 OR p_terms > 6 OR p_limit < 1 THEN
        RAISE EXCEPTION 'lb_search_tiers: % words, % terms, limit %', nw, p_terms, p_limit USING ERRCODE = '22023';
    END IF;
    last_s := array_fill('Infinity'::real, ARRAY[nw]);
    last_k := array_fill(NULL::text, ARRAY[nw]);
    done := array_fill(false, ARRAY[nw]);
    -- Each word's count by the lexicon's primary key (lb_search_present).
    SELECT array_agg(coalesce((SELECT l.records FROM mat_lexicon l
                                WHERE l.domain_id = d AND l.branch_id = b AND l.word = u.w), 0)::bigint ORDER BY u.o)
      INTO counts
      FROM unnest(p_words) WITH ORDINALITY u(w, o);
    -- A word of few postings is read whole at once; a word no Record holds
    -- has no list.
    FOR i IN 1..nw LOOP
        want[i] := CASE WHEN counts[i] < 128 THEN counts[i]::int + 1 ELSE chunk END;
        done[i] := counts[i] = 0;
    END LOOP;
    -- Each term as the tsquery of its words, for the GIN index.
    FOR j IN 0..p_terms - 1 LOOP
        SELECT string_agg(lb_lexeme(u.w), ' | ')::tsquery INTO q
          FROM unnest(p_words, p_masks) u(w, mask) WHERE u.mask & (1 << j) <> 0;
        tq := tq || q;
    END LOOP;
    -- When no word belongs to two terms and the Records holding two words
    -- of one term are few (some pair of them has a rare word, or they meet
    -- in few Records, the words independent), those Records are scored
    -- first (the GIN index finds them): every other Record holds at most
    -- one word of each term, so it scores at most the best current score
    -- of each term's lists, not their sum.
    IF NOT EXISTS (SELECT 1 FROM unnest(p_masks) x WHERE bit_count(x::bit(32)) > 1) THEN
        SELECT string_agg(format('(%s & %s)', lb_lexeme(p_words[x.i]), lb_lexeme(p_words[y.i])), ' | '),
               coalesce(bool_and(least(counts[x.i], counts[y.i]) < 8 * p_gin_max
                                 OR (p_records > 0 AND counts[x.i]::double precision * counts[y.i] / p_records < p_gin_max)), true)
          INTO several, one_each
          FROM generate_subscripts(p_words, 1) x(i), generate_subscripts(p_words, 1) y(i)
         WHERE x.i < y.i AND p_masks[x.i] = p_masks[y.i];
        IF one_each AND several IS NOT NULL THEN
            EXECUTE lb_search_tiers_gin_sql(d, b, p_words, p_masks, several::tsquery) INTO gk, gm, gs;
            SELECT p.k, p.c, p.s, p.n INTO pool_k, pool_c, pool_s, i
              FROM lb_search_tiers_pool(d, b, p_words, p_masks, p_terms, p_limit, '{}', pool_k, pool_c, pool_s, gk, gm, gs) p;
            n_scored := n_scored + i;
        END IF;
    END IF;
    FOR tier IN REVERSE p_terms - 1..1 LOOP
        EXIT WHEN need <= 0;
        -- The combinations of two terms or more that meet in few Records
        -- are read whole from the GIN index (one term's best Records are
        -- the first of its lists).
        IF p_records IS NOT NULL AND p_records > 0 AND tier > 1 THEN
            FOR combo IN 1..all_terms - 1 LOOP
                CONTINUE WHEN bit_count(combo::bit(32)) <> tier OR combo = ANY (gin_done);
                est := p_records::double precision;
                FOR j IN 0..p_terms - 1 LOOP
                    IF combo & (1 << j) <> 0 THEN
                        est := est * (SELECT coalesce(sum(counts[x.o]), 0) FROM generate_subscripts(p_words, 1) x(o)
                                       WHERE p_masks[x.o] & (1 << j) <> 0) / p_records;
                    END IF;
                END LOOP;
                CONTINUE WHEN est >= p_gin_max;
                SELECT string_agg('(' || tq[x.t + 1]::text || ')', ' & ')::tsquery INTO q
                  FROM generate_series(0, p_terms - 1) x(t) WHERE combo & (1 << x.t) <> 0;
                EXECUTE lb_search_tiers_gin_sql(d, b, p_words, p_masks, q) INTO gk, gm, gs;
                gin_done := gin_done || combo;
                CONTINUE WHEN cardinality(gk) = 0;
                SELECT p.k, p.c, p.s, p.n INTO pool_k, pool_c, pool_s, i
                  FROM lb_search_tiers_pool(d, b, p_words, p_masks, p_terms, p_limit, '{}', pool_k, pool_c, pool_s, gk, gm, gs) p;
                n_scored := n_scored + i;
            END LOOP;
        END IF;
        LOOP
            -- The tier's need-th best so far.
            SELECT x.s INTO kth FROM unnest(pool_c, pool_s) x(c, s) WHERE x.c = tier
             ORDER BY x.s DESC OFFSET need - 1 LIMIT 1;
            adv := array_fill(false, ARRAY[nw]);
            any_open := false;
            FOR combo IN 1..all_terms - 1 LOOP
                CONTINUE WHEN bit_count(combo::bit(32)) <> tier OR combo = ANY (gin_done);
                cover := 0;
                bound := 0;
                IF one_each THEN
                    -- One word of each term at most: the best list of each.
                    FOR j IN 0..p_terms - 1 LOOP
                        CONTINUE WHEN combo & (1 << j) = 0;
                        kmax := NULL;
                        FOR i IN 1..nw LOOP
                            IF NOT done[i] AND p_masks[i] = 1 << j THEN
                                cover := cover | p_masks[i];
                                kmax := greatest(kmax, last_s[i]);
                            END IF;
                        END LOOP;
                        bound := bound + coalesce(kmax, 0);
                    END LOOP;
                ELSE
                    FOR i IN 1..nw LOOP
                        IF NOT done[i] AND p_masks[i] & ~combo = 0 THEN
                            cover := cover | p_masks[i];
                            bound := bound + last_s[i];
                        END IF;
                    END LOOP;
                END IF;
                CONTINUE WHEN cover <> combo;
                CONTINUE WHEN kth IS NOT NULL AND kth >= bound * (1 - 1e-6);
                any_open := true;
                FOR i IN 1..nw LOOP
                    IF NOT done[i] AND p_masks[i] & ~combo = 0 THEN
                        adv[i] := true;
                    END IF;
                END LOOP;
            END LOOP;
            EXIT WHEN NOT any_open;
            IF n_scored >= p_budget THEN
                capped := true;
                EXIT;
            END IF;
            fresh := '{}';
            FOR i IN 1..nw LOOP
                CONTINUE WHEN NOT adv[i];
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
            IF cardinality(fresh) > 0 THEN
                SELECT p.k, p.c, p.s, p.n INTO pool_k, pool_c, pool_s, i FROM lb_search_tiers_pool(d, b, p_words, p_masks, p_terms, p_limit, fresh, pool_k, pool_c, pool_s) p;
                n_scored := n_scored + i;
            END IF;
        END LOOP;
        -- The tier's best need Records follow the tiers above.
        SELECT out_k || coalesce(array_agg(x.k ORDER BY x.s DESC, x.k), '{}'),
               out_c || coalesce(array_agg(x.c ORDER BY x.s DESC, x.k), '{}'),
               out_s || coalesce(array_agg(x.s ORDER BY x.s DESC, x.k), '{}')
          INTO out_k, out_c, out_s
          FROM (SELECT y.k, y.c, y.s FROM unnest(pool_k, pool_c, pool_s) y(k, c, s) WHERE y.c = tier
                 ORDER BY y.s DESC, y.k LIMIT need) x;
        need := p_limit - cardinality(out_k);
        EXIT WHEN capped;
    END LOOP;
    ranked := n_scored;
    truncated := capped;
    IF cardinality(out_k) = 0 THEN
        key := NULL;
        matched := NULL;
        score := NULL;
        RETURN NEXT;
        RETURN;
    END IF;
    FOR i IN 1..cardinality(out_k) LOOP
        key := out_k[i];
        matched := out_c[i];
        score := out_s[i];
        RETURN NEXT;
    END LOOP;
END
$function$;
