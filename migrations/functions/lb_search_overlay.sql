-- lb_search_overlay: lb_search on an overlay read at its head (level 1 of
-- bs) over a base read at its head or as of the fork (level 2, cut cs[2]),
-- from the base's own search (lb_search_run on the base as a single
-- branch: its word postings, lexicon counts and GIN index) corrected by the
-- keys whose effective Record is not the base's row at its head: the
-- overlay's own rows (tombstones included) and, when the base moved on
-- after the fork, the keys whose search the base changed since (its rows
-- whose iseq is past the fork, mat_records_iseq_idx: a change of
-- Attributes no index reads leaves iseq) but those whose Kind, title and
-- search Attributes did not change (lb_rec_kept_attrs), read as
-- their history version at the fork (lb_search_overlay_own). Those keys'
-- base rows are dropped from the base's results and their effective
-- versions are ranked here as lb_search_run ranks (full: ts_rank of the
-- OR of the terms; partial: that rank times the terms matched over the
-- terms). Every statement here is static and planned once a session
-- (a generic plan): the overlay's rows by lb_search_overlay_own, inlined;
-- the base's results with whether the overlay decides each key, in one
-- statement. Which keys the overlay decides is read once a call, before
-- the base's search: the overlay's own keys (up to 32) and the base's keys
-- whose iseq is past the fork that do not stand for their version at it
-- (up to 1,000); while a list holds them all, the base's results are
-- tested against it rather than each probed in the overlay's primary key,
-- or read again from the base's rows (a partial match's base row is read
-- again for the terms it matches).
--
-- The base is asked for more results than the limit (and with a larger
-- partial minimum) until what it returned settles the answer: enough of
-- its full matches (or all of them) remain once the dropped keys are
-- gone, and its partial matches were listed when the corrected full
-- matches are fewer than p_partial_min. Past 1,000 results, or when level
-- 1 is not an overlay (a copy still copying), the levels are read as
-- lb_search_run reads them. ranked is the base's candidates plus the
-- overlay's, truncated the base's. An overlay that decides no key (no
-- own rows, no base key changed since the fork) answers as its base.
CREATE OR REPLACE FUNCTION lb_search_overlay(d integer, bs integer[], cs bigint[], hs bigint[], terms tsquery[], words text[], corrs jsonb[], corr jsonb, p_kind text, p_limit integer, p_candidates integer, p_partial_min integer, p_partial_candidates integer)
 RETURNS TABLE(key text, kind text, title text, score real, match text, corrections jsonb, ranked integer, truncated boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
 SET max_parallel_workers_per_gather TO '0'
 SET enable_seqscan TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
DECLARE
    ov int := bs[1];
    base int := bs[2];
    nt int := cardinality(terms);
    pmin int := coalesce(p_partial_min, 0);
    cut bigint := CASE WHEN cs[2] < hs[2] THEN cs[2] ELSE hs[2] END;
    katts jsonb;
    -- The effective versions of the corrected keys that match some term.
    o_key text[];
    o_kind text[];
    o_title text[];
    o_score real[];
    o_matched int[];
    o_n int;
    o_full int;
    -- The base's results of one call.
    b_key text[];
    b_kind text[];
    b_title text[];
    b_score real[];
    b_matched int[];
    b_drop boolean[];
    b_total int;
    b_capped boolean;
    nf int;
    np int;
    nfk int;
    npk int;
    feff int;
    need_p boolean;
    extra int := 4;
    pextra int := 0;
    lim int;
    tries int := 0;
    r record;
    or_q tsquery;
    -- The keys the overlay decides, when few: its own (tombstones
    -- included) and the base's changed after the fork (not standing for
    -- their version at it); each list is used when it holds them all.
    own_keys text[];
    chg_keys text[];
    own_all boolean;
    chg_all boolean;
    settled boolean;
    -- A one-term query's word and its corrections, and those the base
    -- holds with their Records.
    tw text[] := CASE WHEN cardinality(words) = 1 THEN ARRAY[words[1]] || ARRAY(SELECT jsonb_array_elements_text(corrs[1])) END;
    ow text[];
    oc bigint[];
BEGIN
    IF terms IS NULL OR NOT EXISTS (SELECT 1 FROM refs x WHERE x.domain_id = d AND x.id = ov AND x.mode = 'overlay') THEN
        RETURN QUERY SELECT * FROM lb_search_run(d, ov, false, bs, cs, hs, terms, words, corrs, corr, p_kind, p_limit,
                                                 p_candidates, p_partial_min, p_partial_candidates);
        RETURN;
    END IF;
    -- Whether a base row changed after the fork stands for its version at
    -- the fork (a base that did not move on changed none: no base row
    -- is past cut; nor did one that changed only Attributes no index
    -- reads, which leave iseq: then katts is not read, every test of it
    -- being of a row past cut).
    IF cs[2] < hs[2] AND EXISTS (SELECT 1 FROM mat_records m WHERE m.domain_id = d AND m.branch_id = base AND m.iseq > cut) THEN
        katts := lb_rec_kept_attrs(d, base);
    END IF;
    SELECT array_agg(u.key::text) INTO own_keys
      FROM (SELECT u.key FROM mat_records u WHERE u.domain_id = d AND u.branch_id = ov LIMIT 33) u;
    SELECT array_agg(m.key::text) INTO chg_keys
      FROM (SELECT m.key FROM mat_records m
             WHERE m.domain_id = d AND m.branch_id = base AND m.iseq > cut
               AND NOT coalesce(m.created_seq <= cs[2] AND NOT m.deleted
                       AND CASE jsonb_array_length(katts -> m.kind::text)
                           WHEN 1 THEN coalesce((m.lineage ->> (katts -> m.kind::text ->> 0))::numeric <= cs[2], false)
                           ELSE (SELECT bool_and(coalesce((m.lineage ->> a.a)::numeric <= cs[2], false))
                                   FROM jsonb_array_elements_text(katts -> m.kind::text) a(a)) END, false)
             LIMIT 1001) m;
    IF own_keys IS NULL AND chg_keys IS NULL THEN
        -- The overlay decides no key: its answer is the base's, asked as
        -- the base itself is asked (a larger limit can pick other Records
        -- among partial matches tied at the limit).
        RETURN QUERY SELECT * FROM lb_search_run(d, base, true, ARRAY[base], ARRAY[hs[2]], ARRAY[hs[2]], terms, words, corrs, corr, p_kind, p_limit,
                                                 p_candidates, p_partial_min, p_partial_candidates);
        RETURN;
    END IF;
    own_all := coalesce(cardinality(own_keys), 0) <= 32;
    chg_all := coalesce(cardinality(chg_keys), 0) <= 1000;
    SELECT string_agg('(' || x::text || ')', ' | ')::tsquery INTO or_q FROM unnest(terms) x;
    IF nt = 1 AND coalesce(p_kind, '') = '' AND terms[1]::text = lb_lexeme(words[1]) THEN
        -- One word, one lexeme, in one static statement: the base's best
        -- p_limit + 4 postings (the first call of the loop below) with
        -- whether the overlay decides each key, the overlay's best p_limit
        -- postings and the base's changed keys that match, merged by rank
        -- and key; only the p_limit kept are joined to their rows (a
        -- posting is always of a present row: lb_search_words_apply), each
        -- in its own level alone (a lateral probe whose level test runs
        -- before it: as a join condition the test ran after a probe of
        -- both levels, and a plan made on small statistics read each
        -- level's whole branch once an answer). The
        -- first row tells whether the loop below would have stopped after
        -- its first call (the base listed all its matches, or enough of
        -- them are kept): then these rows are the answer; otherwise none
        -- has been returned and the loop runs.
        settled := NULL;
        FOR r IN
            WITH bw AS (
                SELECT s.key, s.score,
                       CASE WHEN own_all THEN coalesce(s.key = ANY (own_keys), false)
                            ELSE EXISTS (SELECT 1 FROM mat_records u
                                          WHERE u.domain_id = d AND u.branch_id = ov AND u.key = s.key) END
                       OR CASE WHEN chg_all THEN coalesce(s.key = ANY (chg_keys), false)
                               ELSE coalesce((SELECT m.iseq > cut AND NOT coalesce(m.created_seq <= cs[2] AND NOT m.deleted
                                                      AND CASE jsonb_array_length(katts -> m.kind::text)
                                                          WHEN 1 THEN coalesce((m.lineage ->> (katts -> m.kind::text ->> 0))::numeric <= cs[2], false)
                                                          ELSE (SELECT bool_and(coalesce((m.lineage ->> a.a)::numeric <= cs[2], false))
                                                                  FROM jsonb_array_elements_text(katts -> m.kind::text) a(a)) END, false)
                                                FROM mat_records m
                                               WHERE m.domain_id = d AND m.branch_id = base AND m.key = s.key), false) END AS dr
                  FROM mat_search_words s
                 WHERE s.domain_id = d AND s.branch_id = base AND s.word = words[1]
                 ORDER BY s.score DESC, s.key
                 LIMIT p_limit + 4),
            chg AS (
                SELECT c.key, c.kind, c.title, ts_rank(c.search, or_q) AS score
                  FROM lb_search_overlay_changed(d, ov, base, cs[2], or_q, lb_search_lexemes(words, corrs), katts, p_kind) c),
            x AS (
                SELECT (SELECT count(*) FROM bw) < p_limit + 4 OR (SELECT count(*) FROM bw WHERE NOT bw.dr) >= p_limit AS settled,
                       CASE WHEN EXISTS (SELECT 1 FROM bw)
                            THEN coalesce((SELECT l.records FROM mat_lexicon l
                                            WHERE l.domain_id = d AND l.branch_id = base AND l.word = words[1]), 0)
                            ELSE 0 END
                       + (SELECT count(*) FROM chg)::int
                       + coalesce((SELECT l.records FROM mat_lexicon l WHERE l.domain_id = d AND l.branch_id = ov AND l.word = words[1]), 0) AS total)
            SELECT v.key AS k, coalesce(om.kind::text, bm.kind::text, v.kind) AS kind, coalesce(om.title, bm.title, v.title) AS title,
                   v.score AS s, x.settled, x.total
              FROM x
              LEFT JOIN LATERAL (
                   SELECT y.key, y.score, y.own, y.kind, y.title
                     FROM (SELECT bw.key::text AS key, bw.score, 0 AS own, NULL::text AS kind, NULL::text AS title FROM bw WHERE NOT bw.dr
                           UNION ALL
                           SELECT o.key::text, o.score, 1, NULL::text, NULL::text
                             FROM (SELECT s.key, s.score FROM mat_search_words s
                                    WHERE s.domain_id = d AND s.branch_id = ov AND s.word = words[1]
                                    ORDER BY s.score DESC, s.key LIMIT p_limit) o
                           UNION ALL
                           SELECT chg.key, chg.score, 2, chg.kind, chg.title FROM chg) y
                    ORDER BY y.score DESC, y.key COLLATE "C"
                    LIMIT p_limit) v ON x.settled
              LEFT JOIN LATERAL (
                   SELECT om.kind, om.title FROM mat_records om
                    WHERE v.own = 1 AND om.domain_id = d AND om.branch_id = ov AND om.key = v.key LIMIT 1) om ON true
              LEFT JOIN LATERAL (
                   SELECT bm.kind, bm.title FROM mat_records bm
                    WHERE v.own = 0 AND bm.domain_id = d AND bm.branch_id = base AND bm.key = v.key LIMIT 1) bm ON true
             ORDER BY v.score DESC, v.key COLLATE "C"
        LOOP
            settled := r.settled;
            EXIT WHEN NOT settled OR r.k IS NULL;
            key := r.k;
            kind := r.kind;
            title := r.title;
            score := r.s;
            match := 'full';
            corrections := NULL;
            ranked := r.total;
            truncated := false;
            RETURN NEXT;
        END LOOP;
        IF settled THEN
            key := NULL;
            kind := NULL;
            title := NULL;
            score := NULL;
            match := 'corrections';
            corrections := coalesce(corr, '{}');
            ranked := r.total;
            truncated := false;
            RETURN NEXT;
            RETURN;
        END IF;
    END IF;
    IF nt = 1 AND coalesce(p_kind, '') = '' AND terms[1]::text <> lb_lexeme(words[1])
       AND terms[1]::text = (SELECT string_agg(lb_lexeme(v), ' | ') FROM unnest(tw) v)::tsquery::text THEN
        -- A word and its corrections (a misspelled word) whose base holds
        -- one or two of them, where lb_search_run would answer the base by
        -- lb_search_or: in one static statement as the one-word statement
        -- above, the base's best p_limit + 4 from lb_search_or (the first
        -- call of the loop below) with whether the overlay decides each
        -- key, the overlay's own candidates from its postings (as the
        -- branch below reads them) and the base's changed keys that match,
        -- merged by rank and key. Unsettled, the loop runs.
        SELECT p.words, p.counts INTO ow, oc FROM lb_search_present(d, base, tw) p;
        IF coalesce(cardinality(ow), 0) BETWEEN 1 AND 2 AND lb_search_or_ok(d, base, oc, p_candidates) THEN
            settled := NULL;
            FOR r IN
                WITH bw AS (
                    SELECT o.key, o.kind, o.title, o.score, o.ranked,
                           CASE WHEN own_all THEN coalesce(o.key = ANY (own_keys), false)
                                ELSE EXISTS (SELECT 1 FROM mat_records u
                                              WHERE u.domain_id = d AND u.branch_id = ov AND u.key = o.key) END
                           OR CASE WHEN chg_all THEN coalesce(o.key = ANY (chg_keys), false)
                                   ELSE coalesce((SELECT m.iseq > cut AND NOT coalesce(m.created_seq <= cs[2] AND NOT m.deleted
                                                          AND CASE jsonb_array_length(katts -> m.kind::text)
                                                              WHEN 1 THEN coalesce((m.lineage ->> (katts -> m.kind::text ->> 0))::numeric <= cs[2], false)
                                                              ELSE (SELECT bool_and(coalesce((m.lineage ->> a.a)::numeric <= cs[2], false))
                                                                      FROM jsonb_array_elements_text(katts -> m.kind::text) a(a)) END, false)
                                                    FROM mat_records m
                                                   WHERE m.domain_id = d AND m.branch_id = base AND m.key = o.key), false) END AS dr
                      FROM lb_search_or(d, base, ow, oc, terms[1], p_limit + 4) o),
                own AS (
                    SELECT m.key::text AS key, m.kind::text AS kind, m.title, ts_rank(m.search, or_q) AS score
                      FROM lb_search_overlay_own_keys(d, ov, tw, p_limit) c
                      JOIN mat_records m ON m.domain_id = d AND m.branch_id = ov AND m.key = c.key COLLATE "C" AND NOT m.deleted),
                chg AS (
                    SELECT c.key, c.kind, c.title, ts_rank(c.search, or_q) AS score
                      FROM lb_search_overlay_changed(d, ov, base, cs[2], or_q, lb_search_lexemes(words, corrs), katts, p_kind) c),
                x AS (
                    SELECT (SELECT count(*) FROM bw) < p_limit + 4 OR (SELECT count(*) FROM bw WHERE NOT bw.dr) >= p_limit AS settled,
                           coalesce((SELECT max(bw.ranked) FROM bw), 0)
                           + (SELECT count(*) FROM chg)::int
                           + (SELECT count(DISTINCT s.key) FROM mat_search_words s
                               WHERE s.domain_id = d AND s.branch_id = ov AND s.word = ANY (tw))::int AS total)
                SELECT v.key AS k, v.kind, v.title, v.score AS s, x.settled, x.total
                  FROM x
                  LEFT JOIN LATERAL (
                       SELECT y.key, y.kind, y.title, y.score
                         FROM (SELECT bw.key::text AS key, bw.kind::text AS kind, bw.title, bw.score FROM bw WHERE NOT bw.dr
                               UNION ALL
                               SELECT own.key, own.kind, own.title, own.score FROM own
                               UNION ALL
                               SELECT chg.key, chg.kind, chg.title, chg.score FROM chg) y
                        ORDER BY y.score DESC, y.key COLLATE "C"
                        LIMIT p_limit) v ON x.settled
                 ORDER BY v.score DESC, v.key COLLATE "C"
            LOOP
                settled := r.settled;
                EXIT WHEN NOT settled OR r.k IS NULL;
                key := r.k;
                kind := r.kind;
                title := r.title;
                score := r.s;
                match := 'full';
                corrections := NULL;
                ranked := r.total;
                truncated := false;
                RETURN NEXT;
            END LOOP;
            IF settled THEN
                key := NULL;
                kind := NULL;
                title := NULL;
                score := NULL;
                match := 'corrections';
                corrections := coalesce(corr, '{}');
                ranked := r.total;
                truncated := false;
                RETURN NEXT;
                RETURN;
            END IF;
        END IF;
    END IF;
    IF nt = 1 AND coalesce(p_kind, '') = '' AND terms[1]::text = lb_lexeme(words[1]) THEN
        -- One word, one lexeme: the overlay's best p_limit own matches
        -- from its postings best first (only they can be in the answer), as
        -- a branch reads its own, and the base's changed keys that match;
        -- the overlay's matches counted from its lexicon.
        SELECT array_agg(z.key ORDER BY z.key), array_agg(z.kind ORDER BY z.key), array_agg(z.title ORDER BY z.key),
               array_agg(z.score ORDER BY z.key), array_agg(1 ORDER BY z.key), count(*) FILTER (WHERE z.changed)
          INTO o_key, o_kind, o_title, o_score, o_matched, o_n
          FROM (SELECT w.key, m.kind::text AS kind, m.title, w.score, false AS changed
                  FROM (SELECT s.key, s.score FROM mat_search_words s
                         WHERE s.domain_id = d AND s.branch_id = ov AND s.word = words[1]
                         ORDER BY s.score DESC, s.key LIMIT p_limit) w
                  JOIN mat_records m ON m.domain_id = d AND m.branch_id = ov AND m.key = w.key AND NOT m.deleted
                UNION ALL
                SELECT c.key, c.kind, c.title, ts_rank(c.search, or_q), true
                  FROM lb_search_overlay_changed(d, ov, base, cs[2], or_q, lb_search_lexemes(words, corrs), katts, p_kind) c) z;
        o_n := o_n + coalesce((SELECT l.records FROM mat_lexicon l WHERE l.domain_id = d AND l.branch_id = ov AND l.word = words[1]), 0);
        o_full := o_n;
    ELSIF nt = 1 AND coalesce(p_kind, '') = ''
          AND terms[1]::text = (SELECT string_agg(lb_lexeme(v), ' | ') FROM unnest(tw) v)::tsquery::text THEN
        -- A word and its corrections, the term the OR of their lexemes
        -- (a misspelled word): of the overlay's own Records (only the best
        -- p_limit can be in the answer) each word's best p_limit from its
        -- postings and those holding two or more of the words (also from
        -- the postings: index tuples, no row read), ranked by the term, as
        -- lb_search_or ranks a branch's; and the base's changed keys that
        -- match. The overlay's matches are counted from its postings.
        SELECT array_agg(z.key ORDER BY z.key), array_agg(z.kind ORDER BY z.key), array_agg(z.title ORDER BY z.key),
               array_agg(z.score ORDER BY z.key), array_agg(1 ORDER BY z.key), count(*) FILTER (WHERE z.changed)
          INTO o_key, o_kind, o_title, o_score, o_matched, o_n
          FROM (SELECT m.key::text AS key, m.kind::text AS kind, m.title, ts_rank(m.search, or_q) AS score, false AS changed
                  FROM lb_search_overlay_own_keys(d, ov, tw, p_limit) c
                  JOIN mat_records m ON m.domain_id = d AND m.branch_id = ov AND m.key = c.key COLLATE "C" AND NOT m.deleted
                UNION ALL
                SELECT c.key, c.kind, c.title, ts_rank(c.search, or_q), true
                  FROM lb_search_overlay_changed(d, ov, base, cs[2], or_q, lb_search_lexemes(words, corrs), katts, p_kind) c) z;
        o_n := coalesce(o_n, 0) + (SELECT count(DISTINCT s.key) FROM mat_search_words s
                                    WHERE s.domain_id = d AND s.branch_id = ov AND s.word = ANY (tw));
        o_full := o_n;
    ELSE
        -- The overlay's present rows and (base moved on) the base's changed
        -- keys the overlay has no row of, as of the fork, that match some
        -- term.
        SELECT array_agg(z.key ORDER BY z.key), array_agg(z.kind ORDER BY z.key), array_agg(z.title ORDER BY z.key),
               array_agg(z.score ORDER BY z.key), array_agg(z.matched ORDER BY z.key)
          INTO o_key, o_kind, o_title, o_score, o_matched
          FROM lb_search_overlay_own(d, ov, base, cs[2], or_q, terms, lb_search_lexemes(words, corrs), katts, p_kind) z;
        o_n := coalesce(cardinality(o_key), 0);
        o_full := (SELECT count(*) FROM unnest(o_matched) m WHERE m = nt);
    END IF;
    LOOP
        tries := tries + 1;
        need_p := false;
        lim := p_limit + extra;
        IF lim > 1000 OR tries > 6 THEN
            RETURN QUERY SELECT * FROM lb_search_run(d, ov, false, bs, cs, hs, terms, words, corrs, corr, p_kind, p_limit,
                                                     p_candidates, p_partial_min, p_partial_candidates);
            RETURN;
        END IF;
        -- The base's results, each with the terms it matches and whether
        -- the overlay decides its key (an own row, or a base row whose
        -- iseq is past the fork that does not stand for its version at the
        -- fork, as katts tells: the keys lb_search_overlay_changed reads),
        -- in one statement: from the lists read above while they hold
        -- every such key, otherwise by probing the result's key in the
        -- overlay's primary key, or reading its base row again.
        SELECT array_agg(s.key ORDER BY s.o) FILTER (WHERE s.match <> 'corrections'),
               array_agg(s.kind ORDER BY s.o) FILTER (WHERE s.match <> 'corrections'),
               array_agg(s.title ORDER BY s.o) FILTER (WHERE s.match <> 'corrections'),
               array_agg(s.score ORDER BY s.o) FILTER (WHERE s.match <> 'corrections'),
               array_agg(CASE WHEN s.match = 'full' THEN nt
                              ELSE (SELECT count(*) FILTER (WHERE m.search @@ t)::int
                                      FROM mat_records m CROSS JOIN unnest(terms) t
                                     WHERE m.domain_id = d AND m.branch_id = base AND m.key = s.key) END ORDER BY s.o)
                   FILTER (WHERE s.match <> 'corrections'),
               coalesce(array_agg(CASE WHEN own_all THEN coalesce(s.key = ANY (own_keys), false)
                                       ELSE EXISTS (SELECT 1 FROM mat_records u
                                                     WHERE u.domain_id = d AND u.branch_id = ov AND u.key = s.key) END
                                  OR CASE WHEN chg_all THEN coalesce(s.key = ANY (chg_keys), false)
                                          ELSE coalesce((SELECT m.iseq > cut AND NOT coalesce(m.created_seq <= cs[2] AND NOT m.deleted
                                                                 AND CASE jsonb_array_length(katts -> m.kind::text)
                                                                     WHEN 1 THEN coalesce((m.lineage ->> (katts -> m.kind::text ->> 0))::numeric <= cs[2], false)
                                                                     ELSE (SELECT bool_and(coalesce((m.lineage ->> a.a)::numeric <= cs[2], false))
                                                                             FROM jsonb_array_elements_text(katts -> m.kind::text) a(a)) END, false)
                                                           FROM mat_records m
                                                          WHERE m.domain_id = d AND m.branch_id = base AND m.key = s.key), false) END
                                  ORDER BY s.o) FILTER (WHERE s.match <> 'corrections'), '{}'),
               count(*) FILTER (WHERE s.match = 'full'), count(*) FILTER (WHERE s.match = 'partial'),
               max(s.ranked) FILTER (WHERE s.match = 'corrections'), bool_or(s.truncated) FILTER (WHERE s.match = 'corrections')
          INTO b_key, b_kind, b_title, b_score, b_matched, b_drop, nf, np, b_total, b_capped
          FROM lb_search_run(d, base, true, ARRAY[base], ARRAY[hs[2]], ARRAY[hs[2]], terms, words, corrs, corr, p_kind, lim,
                             p_candidates, pmin + pextra, p_partial_candidates)
               WITH ORDINALITY s(key, kind, title, score, match, corrections, ranked, truncated, o);
        SELECT count(*) FILTER (WHERE NOT x.dr AND x.m = nt), count(*) FILTER (WHERE NOT x.dr AND x.m < nt)
          INTO nfk, npk
          FROM unnest(b_drop, b_matched) x(dr, m);
        IF nf >= lim THEN
            -- The base had more full matches than it listed: the ones kept
            -- must fill the page; then no partial match can follow.
            EXIT WHEN nfk >= p_limit;
            extra := extra + 2 * (p_limit - nfk) + 4;
            CONTINUE;
        END IF;
        -- Every full match of the base is listed: the corrected full
        -- matches are counted exactly.
        feff := nfk + o_full;
        need_p := nt > 1 AND feff < pmin AND feff < p_limit;
        EXIT WHEN NOT need_p;
        IF nf >= pmin + pextra THEN
            -- The base did not list its partial matches (it had enough
            -- full ones): ask with a partial minimum above them.
            pextra := nf - pmin + 1;
            CONTINUE;
        END IF;
        EXIT WHEN nf + np < lim OR npk >= p_limit - feff;
        extra := extra + 2 * (p_limit - feff - npk) + 4;
    END LOOP;
    b_total := coalesce(b_total, 0) + o_n;
    FOR r IN
        SELECT u.k, u.kind, u.title, u.s, u.m
          FROM (SELECT x.k, x.kind, x.title, x.s, x.m FROM unnest(b_key, b_kind, b_title, b_score, b_matched, b_drop) x(k, kind, title, s, m, dr)
                 WHERE NOT x.dr
                UNION ALL
                SELECT x.k, x.kind, x.title, x.s, x.m FROM unnest(o_key, o_kind, o_title, o_score, o_matched) x(k, kind, title, s, m)) u
         WHERE u.m = nt
         ORDER BY u.s DESC, u.k COLLATE "C"
         LIMIT p_limit
    LOOP
        key := r.k;
        kind := r.kind;
        title := r.title;
        score := r.s;
        match := 'full';
        corrections := NULL;
        ranked := b_total;
        truncated := coalesce(b_capped, false);
        RETURN NEXT;
    END LOOP;
    IF need_p THEN
        FOR r IN
            SELECT u.k, u.kind, u.title, u.s, u.m
              FROM (SELECT x.k, x.kind, x.title, x.s, x.m FROM unnest(b_key, b_kind, b_title, b_score, b_matched, b_drop) x(k, kind, title, s, m, dr)
                     WHERE NOT x.dr
                    UNION ALL
                    SELECT x.k, x.kind, x.title, x.s, x.m FROM unnest(o_key, o_kind, o_title, o_score, o_matched) x(k, kind, title, s, m)) u
             WHERE u.m < nt
             ORDER BY u.m DESC, u.s DESC, u.k COLLATE "C"
             LIMIT p_limit - feff
        LOOP
            key := r.k;
            kind := r.kind;
            title := r.title;
            score := r.s;
            match := 'partial';
            corrections := NULL;
            ranked := b_total;
            truncated := coalesce(b_capped, false);
            RETURN NEXT;
        END LOOP;
    END IF;
    key := NULL;
    kind := NULL;
    title := NULL;
    score := NULL;
    match := 'corrections';
    corrections := coalesce(corr, '{}');
    ranked := b_total;
    truncated := coalesce(b_capped, false);
    RETURN NEXT;
END
$function$;
