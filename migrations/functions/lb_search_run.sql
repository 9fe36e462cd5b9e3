-- lb_search_run: the body of lb_search once the branch's levels (p_d,
-- p_b, p_single, p_bs, p_cs, p_hs as lb_scope_chain resolves them) and the
-- query's terms (words, their corrections, corr: the corrections row's
-- map) are known. lb_search calls it for the branch it reads, and
-- lb_search_overlay for an overlay's base read at its head (p_single).
-- SECURITY INVOKER: it reads as its caller, lb_search, does; called by
-- lorebase_app directly it reads under row-level security.
-- plan_cache_mode force_generic_plan: each static statement here (and in
-- the PL/pgSQL helpers it calls) is planned once a session and its generic
-- plan kept, not planned again on each of the first five calls and then on
-- every call where the generic plan was costed above the custom ones.
CREATE OR REPLACE FUNCTION lb_search_run(p_d integer, p_b integer, p_single boolean, p_bs integer[], p_cs bigint[], p_hs bigint[], terms tsquery[], words text[], corrs jsonb[], corr jsonb, p_kind text, p_limit integer, p_candidates integer DEFAULT 1000, p_partial_min integer DEFAULT 5, p_partial_candidates integer DEFAULT 100)
 RETURNS TABLE(key text, kind text, title text, score real, match text, corrections jsonb, ranked integer, truncated boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    c record;
    r record;
    full_q tsquery;
    src text;
    ordered boolean;
    n int := 0;
    total int := 0;
    capped boolean := false;
    fresh boolean;
    k int;
    stmts text[] := '{}';
    s text;
    pw text[];
    pm int[];
    pn bigint[];
    plain boolean;
    or_q tsquery;
    rare bigint;
    known boolean := false;
    anyn bigint;
    pcand int := p_partial_candidates;
    ow text[];
    oc bigint[];
    fk text[];
    fs real[];
    est double precision;
    nrec bigint;
    probe int;
    pmin int := p_partial_min;
    paired boolean := false;
    tk text[];
    ts double precision[];
    tn int;
    tw text[];
    cw text[];
    ck text[];
    cn bigint;
    cmask int[];
    pc boolean;
    extra text;
    extra_q tsquery;
    one_term boolean;
    others_tier boolean := false;
    tier_min double precision;
    large boolean;
    rare_q text;
    rare_n bigint;
    top_t int;
    top_n bigint;
    est_rest double precision;
    idx_q text;
    idx_cap int;
    cx lb_search_word_plateaus[];
    pr record;
    kw text[];
    kq text;
    kn bigint;
    kest double precision;
    kc bigint[];
    ki int;
    live int[];
    answered boolean := false;
    cs real[];
BEGIN
    SELECT p_d AS d, p_b AS b, p_single AS single, p_bs AS bs, p_cs AS cs, p_hs AS hs INTO c;
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 OR p_candidates IS NULL OR p_candidates < 1
       OR p_partial_candidates IS NULL OR p_partial_candidates < 1 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    src := CASE WHEN c.single THEN lb_search_source(c.d, c.b, NULL) ELSE lb_search_source_levels(c.d, c.bs, c.cs, c.hs) END;
    ordered := c.single AND to_regclass('mat_records_search_rum_idx') IS NOT NULL;
    IF terms IS NOT NULL AND c.single AND coalesce(p_kind, '') = '' AND cardinality(terms) <= 30 THEN
        -- The words of the terms (a word and its corrections) with the
        -- terms each belongs to, when every term is the OR of its words'
        -- lexemes: the postings hold their ranks.
        SELECT array_agg(z.w ORDER BY z.w), array_agg(z.mask ORDER BY z.w), bool_and(z.plain)
          INTO pw, pm, plain
          FROM (SELECT y.w, bit_or(1 << (y.o - 1)::int) AS mask, bool_and(y.plain) AS plain
                  FROM (SELECT t.o, u.w,
                               terms[t.o]::text = (SELECT string_agg(lb_lexeme(v), ' | ')
                                                     FROM unnest(t.ws) v)::tsquery::text AS plain
                          FROM (SELECT x.o, ARRAY[x.word] || ARRAY(SELECT jsonb_array_elements_text(x.cs)) AS ws
                                  FROM unnest(words, corrs) WITH ORDINALITY x(word, cs, o)) t,
                               unnest(t.ws) u(w)) y
                 GROUP BY y.w) z;
    END IF;
    IF coalesce(plain, false) AND cardinality(terms) = 1 AND terms[1]::text <> lb_lexeme(words[1]) THEN
        -- A word and its corrections: those some Record holds, with their
        -- Records (a word alone reads its postings, below, without them).
        SELECT p.words, p.counts INTO ow, oc FROM lb_search_present(c.d, c.b, pw) p;
    END IF;
    IF coalesce(plain, false) AND cardinality(terms) BETWEEN 2 AND 6 THEN
        -- The Records holding each word (the lexicon's counts, read once:
        -- the paths below take them too), each by the lexicon's primary
        -- key: as a join, the plan a session keeps hashed the branch's
        -- whole lexicon (lb_search_present).
        pn := ARRAY(SELECT coalesce((SELECT l.records FROM mat_lexicon l
                                     WHERE l.domain_id = c.d AND l.branch_id = c.b AND l.word = u.w), 0)::bigint
                      FROM unnest(pw) WITH ORDINALITY u(w, o)
                     ORDER BY u.o);
        -- The terms some Record holds (a word of theirs in the lexicon).
        live := ARRAY(SELECT t.t + 1 FROM generate_series(0, cardinality(terms) - 1) t(t)
                       WHERE EXISTS (SELECT 1 FROM unnest(pm, pn) u(mask, n) WHERE u.mask & (1 << t.t) <> 0 AND u.n > 0)
                       ORDER BY t.t);
    END IF;
    IF cardinality(live) BETWEEN 1 AND cardinality(terms) - 1 AND coalesce(p_partial_min, 0) > 0 THEN
        -- The branch's Records and whether it is large (as below, which
        -- keeps them).
        nrec := lb_search_records(c.d, c.b);
        large := coalesce(nrec, 0) = 0 OR nrec >= 3000::bigint * p_candidates;
    END IF;
    IF cardinality(live) BETWEEN 1 AND cardinality(terms) - 1 AND coalesce(p_partial_min, 0) > 0 AND large THEN
        -- On a large branch (as below), a term no Record holds (Ro dMotor
        -- Industries: ro): nothing matches every term, and the best
        -- partial matches are the Records holding every other term,
        -- ranked by ts_rank of the OR of the terms (the absent words add
        -- nothing to it but its divisor, the same for every Record): the
        -- full matches of the query of the terms held, by whichever path
        -- answers it. When they fill the answer and are not truncated,
        -- they are the answer; otherwise the paths below rank the partial
        -- matches (the call's work lost). At 10M the tiers walk took Ro
        -- dMotor Industries 231 ms and ran out of its budget (truncated).
        SELECT string_agg('(' || x::text || ')', ' | ')::tsquery INTO or_q FROM unnest(terms) x;
        fk := '{}';
        FOR r IN
            SELECT x.key, x.match, x.ranked, x.truncated
              FROM lb_search_run(c.d, c.b, c.single, c.bs, c.cs, c.hs,
                                 ARRAY(SELECT terms[i] FROM unnest(live) i), ARRAY(SELECT words[i] FROM unnest(live) i),
                                 ARRAY(SELECT corrs[i] FROM unnest(live) i), NULL, p_kind, p_limit,
                                 p_candidates, 0, p_partial_candidates) x
        LOOP
            IF r.match = 'full' THEN
                fk := fk || r.key;
            ELSIF r.match = 'corrections' THEN
                tn := r.ranked;
                pc := r.truncated;
            END IF;
        END LOOP;
        IF cardinality(fk) >= p_limit AND NOT pc THEN
            RETURN QUERY
                SELECT x.k, m.kind::text, m.title, (ts_rank(m.search, or_q) * cardinality(live) / cardinality(terms))::real,
                       'partial'::text, NULL::jsonb, tn, false
                  FROM unnest(fk) x(k)
                  JOIN mat_records m ON m.domain_id = c.d AND m.branch_id = c.b AND m.key = x.k
                 ORDER BY 4 DESC, 1;
            total := tn;
            answered := true;
        END IF;
        fk := NULL;
        tn := NULL;
        pc := NULL;
    END IF;
    IF terms IS NOT NULL AND NOT answered THEN
        SELECT string_agg('(' || x::text || ')', ' & ')::tsquery INTO full_q FROM unnest(terms) x;
        IF c.single AND coalesce(p_kind, '') = '' AND cardinality(terms) = 1
           AND terms[1]::text = lb_lexeme(words[1]) THEN
            -- One word, one lexeme: its postings hold its rank
            -- (lb_search_words, inlined into a static statement: its
            -- plan is kept for the session rather than made again each
            -- call).
            fresh := true;
            FOR r IN
                SELECT w.key AS k, w.kind, w.title, w.score, w.ranked
                  FROM lb_search_words(c.d, c.b, words[1], p_limit) w
            LOOP
                key := r.k;
                kind := r.kind;
                title := r.title;
                score := r.score;
                match := 'full';
                corrections := NULL;
                ranked := r.ranked;
                truncated := false;
                IF fresh THEN
                    total := total + r.ranked;
                    fresh := false;
                END IF;
                n := n + 1;
                RETURN NEXT;
            END LOOP;
            stmts := NULL;
        ELSIF lb_search_or_ok(c.d, c.b, oc, p_candidates) THEN
            -- One word and its corrections: each word's best postings,
            -- and the Records holding two of them from the GIN index
            -- (lb_search_or_sql), when those are few (lb_search_or_ok).
            -- One or two present words (a misspelling with one or two
            -- corrections) by a static statement (lb_search_or, inlined),
            -- whose plan the session keeps; more as a statement built
            -- for the call.
            IF cardinality(ow) <= 2 THEN
                fresh := true;
                FOR r IN
                    SELECT o.key, o.kind, o.title, o.score, o.match, o.ranked, o.truncated
                      FROM lb_search_or(c.d, c.b, ow, oc, terms[1], p_limit) o
                LOOP
                    key := r.key;
                    kind := r.kind;
                    title := r.title;
                    score := r.score;
                    match := r.match;
                    corrections := NULL;
                    ranked := r.ranked;
                    truncated := r.truncated;
                    IF fresh THEN
                        total := total + r.ranked;
                        capped := capped OR r.truncated;
                        fresh := false;
                    END IF;
                    n := n + 1;
                    RETURN NEXT;
                END LOOP;
                stmts := NULL;
            ELSE
                stmts := ARRAY[lb_search_or_sql(c.d, c.b, ow, oc, terms[1], p_limit)];
            END IF;
        ELSIF coalesce(plain, false) THEN
            -- Several words (or corrections). When a term is in fewer
            -- Records than 8 × p_candidates, or the terms would meet in
            -- fewer than 32 × p_candidates were they independent (and do),
            -- the GIN index reads every full match (its AND proves how few
            -- match) and they are ranked here; partial matches then follow
            -- from the postings, tier by tier (lb_search_tiers), or from
            -- the GIN index's partial tiers when the Records holding some
            -- term are few. Otherwise
            -- the threshold algorithm over the words' postings ranks full
            -- and partial matches in one walk (lb_search_postings).
            -- The Records holding each term (the lexicon's counts): the
            -- rarest term's, every term's, and how many hold every term
            -- were the terms independent (over the branch's Records; 0
            -- when the branch keeps no counters: the GIN index is asked;
            -- read above when a term no Record holds).
            IF large IS NULL THEN
                nrec := lb_search_records(c.d, c.b);
            END IF;
            -- A branch of 3,000 × p_candidates Records or more (or one
            -- keeping no counters): a walk of common words' postings reads
            -- more of them as the branch grows, the pairs of their score
            -- plateaus far less, so the pairs take over from the walk
            -- (below: a misspelled word beside common words, the second
            -- tier of three terms). Measured at 1M (perf_seed_1m) the walk
            -- was the faster (entity resolution p95 29.3-30.8 ms as owner
            -- against 34.8-36.1 with the pairs), at 10M the pairs (Setel
            -- Supply 480 -> 44 ms, Thni Bracket SA 127 -> 49).
            large := coalesce(nrec, 0) = 0 OR nrec >= 3000::bigint * p_candidates;
            -- The Records holding each word (above, unless the query is of
            -- one term or of more than six).
            IF pn IS NULL THEN
                pn := ARRAY(SELECT coalesce((SELECT l.records FROM mat_lexicon l
                                             WHERE l.domain_id = c.d AND l.branch_id = c.b AND l.word = u.w), 0)::bigint
                              FROM unnest(pw) WITH ORDINALITY u(w, o)
                             ORDER BY u.o);
            END IF;
            -- The most common term (top_t, from 0) and how many Records
            -- the others would meet in were they independent.
            SELECT min(x.n), sum(x.n),
                   CASE WHEN nrec > 0 THEN nrec * exp(sum(ln(greatest(x.n, 1)::double precision / nrec))) ELSE 0 END,
                   (array_agg(x.t ORDER BY x.n DESC, x.t))[1], max(x.n),
                   CASE WHEN nrec > 0 AND count(*) > 1
                        THEN nrec * exp(sum(ln(greatest(x.n, 1)::double precision / nrec))
                                        - ln(greatest(max(x.n), 1)::double precision / nrec)) END
              INTO rare, anyn, est, top_t, top_n, est_rest
              FROM (SELECT t.t, sum(u.n) AS n
                      FROM generate_series(0, cardinality(terms) - 1) t(t)
                      JOIN unnest(pw, pm, pn) u(w, mask, n) ON u.mask & (1 << t.t) <> 0
                     GROUP BY t.t) x;
            SELECT string_agg('(' || x::text || ')', ' | ')::tsquery INTO or_q FROM unnest(terms) x;
            -- On a large branch, three terms or more of which one implies
            -- another (lb_search_kept_terms: a misspelled word whose
            -- corrections include the query's next word): the two terms
            -- left, one word each, and the others.
            IF cardinality(terms) BETWEEN 3 AND 6 AND large AND (SELECT bool_or(m & (m - 1) <> 0) FROM unnest(pm) m) THEN
                SELECT h.words, h.others, h.others_n INTO kw, kq, kn
                  FROM lb_search_kept_terms(pw, pm, pn, cardinality(terms)) h;
                IF kw IS NOT NULL THEN
                    kc := ARRAY[pn[array_position(pw, kw[1])], pn[array_position(pw, kw[2])]];
                    kest := CASE WHEN nrec > 0 THEN kc[1]::double precision / nrec * kc[2] END;
                END IF;
            END IF;
            IF cardinality(terms) = 2 AND cardinality(pw) = 2 AND pm[1] + pm[2] = 3
               AND coalesce(nrec > 0 AND est < 2::double precision * p_candidates, false) IS NOT TRUE THEN
                -- Two words: their full matches from the pairs of their
                -- postings' score plateaus, best sum first
                -- (lb_search_pairs), unless a word has too many plateaus
                -- or too many pairs would be read. Two words expected to
                -- meet in fewer than 2 × p_candidates Records (by the
                -- lexicon's counts, were they independent; a rare word with
                -- a common one, as in most names) take the GIN index's AND
                -- below: reading those few Records costs less than listing
                -- and counting the plateaus.
                SELECT p.keys, p.scores, p.complete INTO fk, fs, paired
                  FROM lb_search_pairs(c.d, c.b, pw[1], pw[2], p_limit) p;
            ELSIF cardinality(terms) = 3 AND cardinality(pw) = 3 AND pm[1] | pm[2] | pm[3] = 7 AND pm[1] + pm[2] + pm[3] = 7
                  AND rare >= 8::bigint * p_candidates
                  AND (coalesce(nrec > 0 AND est < 32::double precision * p_candidates, false) IS NOT TRUE
                       OR (large AND rare >= 150::bigint * p_candidates AND est >= 4::double precision * p_candidates)
                       OR (large AND rare >= 50::bigint * p_candidates AND est >= 2::double precision * p_candidates
                           AND (SELECT bool_and(cardinality(lb_search_plateaus(c.d, c.b, u.w, 2)) = 2) FROM unnest(pw) u(w)))) THEN
                -- Three common words, too common for the GIN index's AND
                -- below (each in 8 × p_candidates Records or more, expected
                -- to meet in 32 × p_candidates or more, or the branch keeps
                -- no counters; on a large branch, each in 150 ×
                -- p_candidates or more, expected to meet in 4 × p_candidates
                -- or more, or each in 50 × p_candidates or more and of two
                -- score plateaus or more, expected to meet in 2 ×
                -- p_candidates or more): their full matches from the
                -- triples of their postings' score plateaus, best sum first
                -- (lb_search_triples), unless a word has too many plateaus
                -- or reading would pass its budget (the walk below). The
                -- GIN index's AND checks every Record of the rarest word
                -- against the others' posting lists: at 10M housing gasket
                -- bolt (gasket in 764,740 Records, 21,660 full matches)
                -- 157-168 ms, its triples 75-78. Of the 26 calls of
                -- searchcalls' partial matching and entity resolution
                -- expected to meet in 8 to 32 × p_candidates, the triples
                -- (with plateaus read from their rows, lb_search_triples)
                -- were faster than the AND in 23 and as fast in 2 (two runs
                -- each way); the one slower is Steel Bolt AG (ag in 134,650
                -- Records, all of one plateau, read only by meetings:
                -- 202-205 ms against 44). The cut at 150 × lies between ag
                -- and light (bracket steel light, light in 150,720: 61-66
                -- ms against 67-75); below it three faster calls (eastern,
                -- reinforced: 111,520 and 136,910) stay with the AND. Of
                -- the 16 calls expected in 4 to 8 × p_candidates, the
                -- triples were faster in 15 and as fast in one (two runs
                -- each way; washer steel seal 89-91 ms against 57-59).
                -- Since the meetings of two plateaus are read from their
                -- rows (lb_search_triples), the triples also beat the AND
                -- below 150 × and 4 ×, but for a word of one plateau (the
                -- suffixes of Suppliers' names: ag, gmbh, inc, ltd, sa, in
                -- about 135,000 Records each at 10M, every triple holding
                -- its one plateau, too large to read whole): at 10M the 27
                -- calls of searchcalls taking the triples by this bound
                -- (words each in 50 × p_candidates Records or more and of
                -- two plateaus or more, expected to meet in 2 to 150 ×
                -- p_candidates) took 618 ms in all against 1,080 by the
                -- AND (means of three runs each way), 24 faster, 2 as
                -- fast, one slower (Nozzle Steel Trading 23 ms against
                -- 18; steel reinforced bolt 27 against 68). Taking also
                -- those expected in 1 to 2 × moved 21 more calls, 15
                -- faster, 5 slower (steel clamp titanium 35 ms against 21;
                -- 366 ms in all against 487, the class's p95 unchanged);
                -- taking also the words of one plateau moved 12 calls of
                -- entity resolution, all slower (Steel Bolt AG 48 against
                -- 26; 416 against 235; two runs each way). A word's second
                -- plateau is one descent of the rank index
                -- (lb_search_plateaus).
                SELECT p.keys, p.scores, p.complete INTO fk, fs, paired
                  FROM lb_search_triples(c.d, c.b, pw, p_limit) p;
            ELSIF cardinality(terms) = 2 AND cardinality(pw) > 2 AND large
                  AND coalesce(nrec > 0 AND est < 2::double precision * p_candidates, false) IS NOT TRUE THEN
                -- On a large branch (above), two terms whose other words
                -- than their common ones (lb_search_term_commons: the most
                -- common of each term in 8 × p_candidates Records or more,
                -- and as many more as leave fewer than 32 × p_candidates
                -- Records to the others) are a misspelled word's rarer
                -- corrections, as in a misspelled common word beside a
                -- common one (Setel Supply: steel, and set or setel, and
                -- supply; Hosuing Trading: housing and hose, and hosuing,
                -- and trading). A full match holds a common word of each
                -- term and nothing else of the query, or one of the others,
                -- or two common words of one term. The first score what the
                -- two words' postings say, so the best p_limit of them are
                -- within the best p_limit of that pair's plateaus
                -- (lb_search_pairs, each pair of common words, at most
                -- four): a Record scoring less than p_limit of those by the
                -- two words scores less than them in full. The others and
                -- the Records holding two common words of a term are few:
                -- the GIN index reads them all (or, past 32 × p_candidates
                -- more than the others hold, the walk below answers). All
                -- are ranked together below by ts_rank.
                SELECT h.words, h.masks, h.words_min, h.others, h.others_n, h.single
                  INTO cw, cmask, cn, rare_q, rare_n, one_term
                  FROM lb_search_term_commons(pw, pm, pn, 32::bigint * p_candidates) h;
                IF one_term AND cmask[1] = 1 AND cmask[cardinality(cmask)] = 2 AND cn >= 8::bigint * p_candidates
                   AND (SELECT count(*) FILTER (WHERE m = 1) * count(*) FILTER (WHERE m = 2) FROM unnest(cmask) m) <= 4
                   AND rare_n < 32::bigint * p_candidates THEN
                    ck := '{}';
                    paired := true;
                    -- Each common word's plateaus read and counted once
                    -- for the pairs it is in.
                    cx := ARRAY(SELECT ROW(w, NULL, NULL, NULL)::lb_search_word_plateaus FROM unnest(cw) w);
                    <<pairs>>
                    FOR i IN 1..cardinality(cw) LOOP
                        CONTINUE WHEN cmask[i] <> 1;
                        FOR j IN 1..cardinality(cw) LOOP
                            CONTINUE WHEN cmask[j] <> 2;
                            SELECT * INTO pr FROM lb_search_pairs_of(c.d, c.b, cx[i], cx[j], p_limit) p;
                            tk := pr.keys;
                            pc := pr.complete;
                            IF tk IS NULL THEN
                                ck := NULL;
                                EXIT pairs;
                            END IF;
                            cx[i] := pr.p_x1;
                            cx[j] := pr.p_x2;
                            ck := ck || tk;
                            paired := paired AND pc;
                        END LOOP;
                    END LOOP;
                    tk := NULL;
                    -- The others, and two common words of one term. A
                    -- Record holding one of the others holds its term: with
                    -- no two common words of one term, the GIN index reads
                    -- the others beside the other term
                    -- (lb_search_others_rest), not beside full_q, whose
                    -- common word of the others' term it would decode
                    -- whole. With them, beside full_q: an OR of the two
                    -- reads would leave the index no word every match
                    -- holds, and it would decode every word's list (at 10M
                    -- Hosuing Ltd, housing and hose common: 28 ms against
                    -- 25).
                    extra := (SELECT string_agg('(' || lb_lexeme(x.w) || ' & ' || lb_lexeme(y.w) || ')', ' | ')
                                FROM unnest(cw, cmask) x(w, m) JOIN unnest(cw, cmask) y(w, m) ON y.m = x.m AND y.w > x.w);
                    IF extra IS NULL THEN
                        extra_q := CASE WHEN rare_q IS NOT NULL THEN rare_q::tsquery && lb_search_others_rest(terms, pw, pm, cw, 2) END;
                    ELSE
                        extra_q := full_q && concat_ws(' | ', rare_q, extra)::tsquery;
                    END IF;
                    IF ck IS NOT NULL AND extra_q IS NOT NULL THEN
                        probe := (rare_n + 32::bigint * p_candidates)::int;
                        SELECT f.keys INTO fk FROM lb_search_full_keys(c.d, c.b, extra_q, or_q, probe + 1) f;
                        IF cardinality(fk) > probe THEN
                            ck := NULL;
                        END IF;
                    END IF;
                    fk := CASE WHEN ck IS NOT NULL THEN ARRAY(SELECT DISTINCT x.k FROM unnest(ck || coalesce(fk, '{}')) x(k)) END;
                END IF;
            ELSIF kw IS NOT NULL AND coalesce(kest < 2::double precision * p_candidates, false) IS NOT TRUE
                  AND kn <= 128::bigint * p_candidates THEN
                -- Terms of which one implies another (above): the full
                -- matches are the Records holding both words left (kw),
                -- the rest of the query adding to their score only when
                -- they hold one of the others. Those holding none score
                -- what the two words' postings say: their best p_limit are
                -- within the best p_limit of the pair's plateaus
                -- (lb_search_pairs), as for a query of the two words. Those
                -- holding one of the others are few: the GIN index reads
                -- them all beside the two words, from the Records holding
                -- one of the others and the rarer word (checked for the
                -- more common one, as the full matches are below, at most
                -- one for every 256 of its Records). All are ranked
                -- together below by ts_rank. The terms' overlap misleads
                -- the estimate of the full matches (it counts steel twice
                -- in Setel Steel Supply), so the pair's own estimate
                -- (kest) chooses, as for two words: expected in fewer than
                -- 2 × p_candidates Records, the GIN index's AND below.
                -- At 10M a walk of the postings took Setel Steel Supply:
                -- its bound counted steel once a term, and set, of one
                -- score in 15,530 Records, held it open until read whole.
                SELECT p.keys, p.complete INTO ck, pc FROM lb_search_pairs(c.d, c.b, kw[1], kw[2], p_limit) p;
                IF ck IS NOT NULL AND kn > 0 THEN
                    -- The rarer word first (ki), the more common checked.
                    ki := CASE WHEN kc[1] <= kc[2] THEN 1 ELSE 2 END;
                    idx_q := '(' || kq || ') & ' || lb_lexeme(kw[ki]);
                    idx_cap := greatest(kc[3 - ki] / 256, 1)::int;
                    SELECT f.keys INTO tk
                      FROM lb_search_full_keys(c.d, c.b, (idx_q || ' & ' || lb_lexeme(kw[3 - ki]))::tsquery, or_q, kn::int + 1,
                                               idx_q::tsquery, idx_cap) f;
                    ck := CASE WHEN cardinality(tk) <= kn THEN ck || tk END;
                    tk := NULL;
                END IF;
                IF ck IS NOT NULL THEN
                    fk := ARRAY(SELECT DISTINCT x.k FROM unnest(ck) x(k));
                    paired := pc;
                END IF;
            END IF;
            IF fk IS NOT NULL THEN
                FOR r IN
                    SELECT x.k, m.kind, m.title, ts_rank(m.search, or_q) AS s
                      FROM unnest(fk) x(k)
                      JOIN mat_records m ON m.domain_id = c.d AND m.branch_id = c.b AND m.key = x.k
                     ORDER BY 4 DESC, 1
                     LIMIT p_limit
                LOOP
                    key := r.k;
                    kind := r.kind;
                    title := r.title;
                    score := r.s;
                    match := 'full';
                    corrections := NULL;
                    ranked := cardinality(fk);
                    truncated := false;
                    n := n + 1;
                    RETURN NEXT;
                END LOOP;
                total := cardinality(fk);
                -- Every full match read (fewer than p_limit): the
                -- partial matches follow as below; otherwise the
                -- answer is complete.
                known := paired;
                paired := NOT paired;
            ELSE
                paired := false;
            END IF;
            IF paired THEN
                stmts := NULL;
            ELSIF known THEN
                NULL;
            ELSIF rare < 8::bigint * p_candidates
               OR (cardinality(terms) BETWEEN 2 AND 6 AND est < 32::double precision * p_candidates) THEN
                -- A term in fewer Records than 8 × p_candidates, or terms
                -- that, were they independent, would meet in fewer than
                -- 32 × p_candidates: the GIN index's AND of the terms reads
                -- the full matches (their rows, up to one more than the
                -- rarest term's Records or 128 × p_candidates: words that
                -- meet more often than independent ones, as assembly bolt
                -- steel at 10M, expected in 31,828 Records, would
                -- otherwise walk their postings for tens of seconds;
                -- lb_search_full_keys). If it read them all, they are
                -- ranked here, exactly.
                probe := least(rare, 128::bigint * p_candidates)::int;
                -- The GIN index's AND decodes every term's posting list,
                -- the most common's too: when the other terms are expected
                -- in few Records beside it (at 10M a heap row read and
                -- ranked took about 3 us, 40 ms for 12,025 rows, and a
                -- posting decoded about 4 ns, 15 ms for steel's 3,745,590:
                -- one row for some 750 postings; 256 leaves room for the
                -- estimate), the index reads them
                -- and the rows are checked for it, at most top_n / 256
                -- rows before the index reads every term (rail steel ltd
                -- at 10M: 15 -> 2 ms). Expected in up to top_n / 256
                -- Records, not half that: at 10M the 41 calls of
                -- searchcalls' partial matching and entity resolution
                -- (seed 902) this moved took 752 ms in all against 884,
                -- 37 faster (Brass Valve Works: brass and works, 3,630
                -- rows checked for valve, 17 ms against 28 for the AND),
                -- 4 slower (steel bolt custom 41 against 36).
                idx_q := NULL;
                idx_cap := NULL;
                IF est_rest IS NOT NULL AND est_rest * 256 <= top_n THEN
                    SELECT string_agg('(' || terms[i]::text || ')', ' & ' ORDER BY i) INTO idx_q
                      FROM generate_subscripts(terms, 1) i
                     WHERE i <> top_t + 1;
                    idx_cap := (top_n / 256)::int;
                END IF;
                SELECT f.keys, f.scores INTO fk, fs FROM lb_search_full_keys(c.d, c.b, full_q, or_q, probe + 1, idx_q::tsquery, idx_cap) f;
                IF cardinality(fk) <= probe THEN
                    FOR r IN
                        SELECT x.k, m.kind, m.title, x.s
                          FROM (SELECT u.k, u.s FROM unnest(fk, fs) u(k, s) ORDER BY u.s DESC, u.k LIMIT p_limit) x
                          JOIN mat_records m ON m.domain_id = c.d AND m.branch_id = c.b AND m.key = x.k
                         ORDER BY x.s DESC, x.k
                    LOOP
                        key := r.k;
                        kind := r.kind;
                        title := r.title;
                        score := r.s;
                        match := 'full';
                        corrections := NULL;
                        ranked := cardinality(fk);
                        truncated := false;
                        n := n + 1;
                        RETURN NEXT;
                    END LOOP;
                    total := cardinality(fk);
                    known := true;
                ELSIF probe >= p_limit THEN
                    -- More than p_limit match every term: no partial match
                    -- can follow.
                    pmin := 0;
                END IF;
            END IF;
            IF paired THEN
                NULL;
            ELSIF known AND anyn < 8::bigint * p_partial_candidates THEN
                -- Few Records hold some term (the lexicon's counts): the
                -- GIN index's partial tiers below rank them all, exactly,
                -- with a candidate cap above their number.
                pcand := greatest(p_partial_candidates::bigint, anyn + 1)::int;
                stmts := '{}';
            ELSIF known AND cardinality(terms) BETWEEN 2 AND 6 THEN
                -- Every full match is read: the partial matches, tier by
                -- tier, exactly from the words' postings (lb_search_tiers);
                -- for three words, one each, the second tier from the
                -- pairs of their postings' score plateaus first
                -- (lb_search_tier_pairs), when it fills the answer and two
                -- of the words some Record holds are expected to meet in
                -- 7 × p_candidates Records or more, or the branch holds
                -- 3,000 × p_candidates Records or more (lb_search_tier_words;
                -- below, the walk reads the tier from the GIN index for
                -- fewer pages, measured at 100k and 1M: there the pairs
                -- read 1.8 to 2.3 times the buffers and doubled entity
                -- resolution's p50; the walk reads more of the words'
                -- postings as the branch grows, and at 10M ten calls of
                -- entity resolution took 750 ms by the walk, 611 by the
                -- pairs).
                tier_min := CASE WHEN large THEN 0 ELSE 7::double precision * p_candidates END;
                IF n < p_limit AND n < coalesce(p_partial_min, 0) AND cardinality(terms) = 3 AND cardinality(pw) = 3
                   AND pm[1] | pm[2] | pm[3] = 7 AND pm[1] + pm[2] + pm[3] = 7 THEN
                    tw := lb_search_tier_words(c.d, c.b, pw, nrec, tier_min);
                ELSIF n < p_limit AND n < coalesce(p_partial_min, 0) AND cardinality(terms) = 3 AND cardinality(pw) > 3 AND large THEN
                    -- On a large branch (above), three terms, one or more the
                    -- OR of a misspelled word's corrections: the pairs of the
                    -- terms' most common words, when the words other than
                    -- those are in fewer than 32 × p_candidates Records in
                    -- all (lb_search_term_commons: one common word a term).
                    -- A Record holding two terms holds two of those words,
                    -- or one of the others: the pairs rank the first by the
                    -- two words' postings (a Record holding one of the others
                    -- beside them scores more than they say, and is read
                    -- below), the GIN index reads the second.
                    SELECT h.words, h.others, h.others_n, h.single INTO cw, rare_q, rare_n, one_term
                      FROM lb_search_term_commons(pw, pm, pn, 32::bigint * p_candidates) h;
                    IF one_term AND cardinality(cw) = 3 AND rare_q IS NOT NULL AND rare_n < 32::bigint * p_candidates THEN
                        tw := lb_search_tier_words(c.d, c.b, cw, nrec, tier_min);
                        others_tier := tw IS NOT NULL;
                    END IF;
                END IF;
                IF tw IS NOT NULL THEN
                    SELECT z.keys, z.scores, z.ranked INTO tk, ts, tn FROM lb_search_tier_pairs(c.d, c.b, tw, fk, p_limit - n) z;
                    IF tk IS NOT NULL AND others_tier THEN
                        -- The Records holding a rarer correction, with the
                        -- ts_rank the GIN index's read computed from their
                        -- rows: only their best p_limit - n (in the order
                        -- below) can be answered, and only those are read
                        -- again below (at 10M Beat Valve Inc: beam or beacon
                        -- beside valve or inc, thousands of Records, ranked
                        -- twice).
                        SELECT f.keys, f.scores INTO ck, cs
                          FROM lb_search_full_keys(c.d, c.b, rare_q::tsquery && lb_search_others_rest(terms, pw, pm, cw, 2), or_q, rare_n::int + 1) f;
                        tn := tn + cardinality(ck);
                        ck := ARRAY(SELECT u.k FROM unnest(ck, cs) u(k, s) WHERE u.k <> ALL (coalesce(fk, '{}'))
                                     ORDER BY (u.s * 2 / 3)::real DESC, u.k LIMIT p_limit - n);
                        tk := ARRAY(SELECT DISTINCT x.k FROM unnest(tk || ck) x(k) WHERE x.k <> ALL (coalesce(fk, '{}')));
                    END IF;
                END IF;
                IF tk IS NULL AND n < p_limit AND n < coalesce(p_partial_min, 0) AND large AND cardinality(terms) = 3
                   AND p_limit - n + cardinality(fk) <= 1000 THEN
                    -- On a large branch, three terms whose second tier the
                    -- pairs of their words did not rank: a Record matching
                    -- two terms is a full match of the query of those two,
                    -- and of those a Record matching the third too is one
                    -- of the full matches (fk, every one read). So the
                    -- tier's best p_limit - n are within the best p_limit -
                    -- n + cardinality(fk) full matches of the three queries
                    -- of two terms (as lb_search_tier_pairs reasons for
                    -- pairs of words), each by whichever path answers it,
                    -- ranked below by ts_rank of the OR of the three (the
                    -- third term's words add nothing to it but its divisor,
                    -- the same for every Record). When they fill the answer
                    -- and none is truncated they are the answer; otherwise
                    -- the tiers walk below (the calls' work lost). At 10M
                    -- the tiers walk took Hosuing Epoxy Co (two common
                    -- corrections, housing and hose) 127 ms and ran out of
                    -- its budget (truncated).
                    ck := '{}';
                    tn := 0;
                    pc := false;
                    FOR i IN 1..3 LOOP
                        FOR r IN
                            SELECT x.key, x.match, x.ranked, x.truncated
                              FROM lb_search_run(c.d, c.b, c.single, c.bs, c.cs, c.hs,
                                                 ARRAY(SELECT terms[j] FROM generate_series(1, 3) j WHERE j <> i ORDER BY j),
                                                 ARRAY(SELECT words[j] FROM generate_series(1, 3) j WHERE j <> i ORDER BY j),
                                                 ARRAY(SELECT corrs[j] FROM generate_series(1, 3) j WHERE j <> i ORDER BY j),
                                                 NULL, p_kind, p_limit - n + cardinality(fk), p_candidates, 0, p_partial_candidates) x
                        LOOP
                            IF r.match = 'full' THEN
                                ck := ck || r.key;
                            ELSIF r.match = 'corrections' THEN
                                tn := tn + r.ranked;
                                pc := pc OR r.truncated;
                            END IF;
                        END LOOP;
                    END LOOP;
                    ck := ARRAY(SELECT DISTINCT x.k FROM unnest(ck) x(k) WHERE x.k <> ALL (fk));
                    IF cardinality(ck) >= p_limit - n AND NOT pc THEN
                        tk := ck;
                    END IF;
                END IF;
                IF tk IS NOT NULL THEN
                    total := total + tn;
                    FOR r IN
                        SELECT x.k, m.kind, m.title, (ts_rank(m.search, or_q) * 2 / 3)::real AS s
                          FROM unnest(tk) x(k)
                          JOIN mat_records m ON m.domain_id = c.d AND m.branch_id = c.b AND m.key = x.k
                         ORDER BY 4 DESC, 1
                         LIMIT p_limit - n
                    LOOP
                        key := r.k;
                        kind := r.kind;
                        title := r.title;
                        score := r.s;
                        match := 'partial';
                        corrections := NULL;
                        ranked := tn;
                        truncated := false;
                        n := n + 1;
                        RETURN NEXT;
                    END LOOP;
                END IF;
                IF n < p_limit AND n < coalesce(p_partial_min, 0) THEN
                    fresh := false;
                    FOR r IN
                        SELECT p.key, m.kind, m.title, p.ranked, p.truncated,
                               (ts_rank(m.search, or_q) * p.matched / cardinality(terms))::real AS score
                          FROM lb_search_tiers(c.d, c.b, pw, pm, cardinality(terms), p_limit - n,
                                               greatest(p_partial_candidates * 10, p_candidates * 8),
                                               8 * p_candidates, nrec) p
                          LEFT JOIN mat_records m ON m.domain_id = c.d AND m.branch_id = c.b AND m.key = p.key
                         ORDER BY p.matched DESC NULLS LAST, 6 DESC, p.key
                    LOOP
                        IF NOT fresh THEN
                            total := total + r.ranked;
                            capped := capped OR r.truncated;
                            fresh := true;
                        END IF;
                        CONTINUE WHEN r.key IS NULL;
                        key := r.key;
                        kind := r.kind;
                        title := r.title;
                        score := r.score;
                        match := 'partial';
                        corrections := NULL;
                        ranked := r.ranked;
                        truncated := r.truncated;
                        n := n + 1;
                        RETURN NEXT;
                    END LOOP;
                END IF;
                stmts := NULL;
            ELSE
                fresh := false;
                FOR r IN
                    SELECT p.key, m.kind, m.title, p.matched, p.ranked, p.truncated,
                           (ts_rank(m.search, or_q) * p.matched / cardinality(terms))::real AS score
                      FROM lb_search_postings(c.d, c.b, pw, pm, cardinality(terms), p_limit - n, pmin,
                                              p_candidates * 32, known, p_partial_candidates * 10) p
                      LEFT JOIN mat_records m ON m.domain_id = c.d AND m.branch_id = c.b AND m.key = p.key
                     WHERE NOT known OR (n < p_limit AND n < coalesce(p_partial_min, 0) AND cardinality(terms) > 1)
                     ORDER BY p.matched DESC NULLS LAST, 7 DESC, p.key
                LOOP
                    IF NOT fresh THEN
                        total := total + r.ranked;
                        capped := capped OR r.truncated;
                        fresh := true;
                    END IF;
                    CONTINUE WHEN r.key IS NULL;
                    -- Partial matches (after every full one) only when too
                    -- few match every term.
                    EXIT WHEN r.matched < cardinality(terms) AND n >= coalesce(p_partial_min, 0)
                         AND match IS DISTINCT FROM 'partial';
                    key := r.key;
                    kind := r.kind;
                    title := r.title;
                    score := r.score;
                    match := CASE WHEN r.matched = cardinality(terms) THEN 'full' ELSE 'partial' END;
                    corrections := NULL;
                    ranked := r.ranked;
                    truncated := r.truncated;
                    n := n + 1;
                    RETURN NEXT;
                END LOOP;
                stmts := NULL;
            END IF;
        ELSE
            -- Several words: the GIN index's first p_candidates matches,
            -- truncated when the cap is hit (the RUM index's order for
            -- several words is not ts_rank's: measured less honest at 1M).
            stmts := ARRAY[lb_search_full_sql(src, p_kind, terms, p_candidates, p_limit)];
        END IF;
        k := cardinality(terms);
        LOOP
            EXIT WHEN stmts IS NULL;
            FOREACH s IN ARRAY stmts LOOP
                fresh := true;
                FOR r IN EXECUTE s LOOP
                    key := r.key;
                    kind := r.kind;
                    title := r.title;
                    score := r.score;
                    match := r.match;
                    corrections := NULL;
                    ranked := r.ranked;
                    truncated := r.truncated;
                    IF fresh THEN
                        total := total + r.ranked;
                        capped := capped OR r.truncated;
                        fresh := false;
                    END IF;
                    n := n + 1;
                    RETURN NEXT;
                END LOOP;
            END LOOP;
            -- Partial matches follow when few Records match every term:
            -- up to 6 terms tier by tier, the most terms matched first.
            k := k - 1;
            EXIT WHEN k < 1 OR n >= p_limit OR cardinality(terms) < 2
                   OR (k = cardinality(terms) - 1 AND n >= coalesce(p_partial_min, 0));
            IF cardinality(terms) <= 6 THEN
                stmts := ARRAY[lb_search_partial_sql(src, p_kind, terms, full_q, pcand, p_limit - n, ordered, k)];
            ELSE
                stmts := ARRAY[lb_search_partial_sql(src, p_kind, terms, full_q, pcand, p_limit - n)];
                k := 1;
            END IF;
        END LOOP;
    END IF;
    key := NULL;
    kind := NULL;
    title := NULL;
    score := NULL;
    match := 'corrections';
    corrections := coalesce(corr, '{}');
    ranked := total;
    truncated := capped;
    RETURN NEXT;
END
$function$;
