-- lb_search_overlay: lb_search on an overlay read at its head (level 1 of
-- bs) over a base read at its head or as of the fork (level 2, cut cs[2]),
-- from the base's own search (lb_search_run on the base as a single
-- branch: its word postings, lexicon counts and GIN index) corrected by the
-- keys whose effective Record is not the base's row at its head: the
-- overlay's own rows (tombstones included) and, when the base moved on
-- after the fork, the keys the base changed since (its rows past the fork,
-- mat_records_seq_idx) but those whose Kind, title and search vector did
-- not change (lb_rec_kept_sql 'search': a change of other Attributes),
-- read as their history version at the fork. Those keys' base rows are
-- dropped from the base's results and their effective versions are ranked
-- here as lb_search_run ranks (full: ts_rank of the OR of the terms;
-- partial: that rank times the terms matched over the terms).
--
-- The base is asked for more results than the limit (and with a larger
-- partial minimum) until what it returned settles the answer: enough of
-- its full matches (or all of them) remain once the dropped keys are
-- gone, and its partial matches were listed when the corrected full
-- matches are fewer than p_partial_min. Past 1,000 results, or when level
-- 1 is not an overlay (a copy still copying), the levels are read as
-- lb_search_run reads them. ranked is the base's candidates plus the
-- overlay's, truncated the base's.
CREATE OR REPLACE FUNCTION lb_search_overlay(d integer, bs integer[], cs bigint[], hs bigint[], terms tsquery[], words text[], corrs jsonb[], corr jsonb, p_kind text, p_limit integer, p_candidates integer, p_partial_min integer, p_partial_candidates integer)
 RETURNS TABLE(key text, kind text, title text, score real, match text, corrections jsonb, ranked integer, truncated boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
 SET max_parallel_workers_per_gather TO '0'
 SET enable_seqscan TO 'off'
AS $function$
#variable_conflict use_column
DECLARE
    ov int := bs[1];
    base int := bs[2];
    moved boolean := cs[2] < hs[2];
    nt int := cardinality(terms);
    pmin int := coalesce(p_partial_min, 0);
    or_q tsquery;
    kf text := '';
    matched_sql text;
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
    drop_sql text;
    kept text;
BEGIN
    IF terms IS NULL OR NOT EXISTS (SELECT 1 FROM refs x WHERE x.domain_id = d AND x.id = ov AND x.mode = 'overlay') THEN
        RETURN QUERY SELECT * FROM lb_search_run(d, ov, false, bs, cs, hs, terms, words, corrs, corr, p_kind, p_limit,
                                                 p_candidates, p_partial_min, p_partial_candidates);
        RETURN;
    END IF;
    SELECT string_agg('(' || x::text || ')', ' | ')::tsquery INTO or_q FROM unnest(terms) x;
    IF coalesce(p_kind, '') <> '' THEN
        kf := format(' AND e.kind = %L', p_kind);
    END IF;
    kept := lb_rec_kept_sql(d, base, cs[2], 'm', 'search');
    matched_sql := (SELECT string_agg(format('(e.search @@ %L::tsquery)::int', t::text), ' + ') FROM unnest(terms) t);
    -- The overlay's present rows and (base moved on) the base's changed
    -- keys the overlay has no row of, as of the fork, that match some term.
    EXECUTE format($q$SELECT array_agg(z.key ORDER BY z.key), array_agg(z.kind ORDER BY z.key), array_agg(z.title ORDER BY z.key),
               array_agg(z.score ORDER BY z.key), array_agg(z.matched ORDER BY z.key)
          FROM (SELECT e.key::text AS key, e.kind::text AS kind, e.title, e.matched,
                       CASE WHEN e.matched = %5$s THEN ts_rank(e.search, %4$L::tsquery)
                            ELSE (ts_rank(e.search, %4$L::tsquery) * e.matched / %5$s)::real END AS score
                  FROM (SELECT e.*, %6$s AS matched
                          FROM (SELECT o.key, o.kind, o.title, o.search FROM mat_records o
                                 WHERE o.domain_id = %1$L AND o.branch_id = %2$L AND NOT o.deleted
                                   AND o.search @@ %4$L::tsquery%8$s%7$s) e) e) z$q$,
                   d, ov, base, or_q::text, nt, matched_sql,
                   CASE WHEN moved THEN format($u$
                        UNION ALL
                        SELECT x.key, x.kind, x.title, %5$s AS search
                          FROM mat_records cb
                         CROSS JOIN LATERAL (SELECT h.key, h.kind, h.title, h."values", h.op FROM mat_history h
                                 WHERE h.domain_id = %1$L AND h.branch_id = %2$L AND h.key = cb.key AND h.seq <= %3$L
                                   AND NOT coalesce(%10$s, false)
                                 ORDER BY h.seq DESC LIMIT 1) x
                         WHERE cb.domain_id = %1$L AND cb.branch_id = %2$L AND cb.seq > %3$L AND x.op <> 'delete'
                           AND NOT EXISTS (SELECT 1 FROM mat_records u WHERE u.domain_id = %1$L AND u.branch_id = %6$L AND u.key = x.key)%8$s
                           AND (%9$s) AND %5$s @@ %7$L::tsquery$u$,
                        d, base, cs[2], NULL, lb_search_vector_sql(d, base), ov, or_q::text,
                        replace(kf, 'e.kind', 'x.kind'),
                        -- A version matches a term only if one of the
                        -- term's lexemes is in its lowered text: the
                        -- search vector is computed for those alone.
                        coalesce((SELECT string_agg(format('strpos(lower(x.title || %L || x."values"::text), %L) > 0', ' ', lx), ' OR ')
                                    FROM (SELECT DISTINCT lx
                                            FROM unnest(words || ARRAY(SELECT jsonb_array_elements_text(c) FROM unnest(corrs) c)) w,
                                                 unnest(tsvector_to_array(to_tsvector('simple', w))) lx) z), 'false'),
                        lb_rec_kept_sql(d, base, cs[2], 'cb', 'search')) ELSE '' END,
                   replace(kf, 'e.kind', 'o.kind'))
       INTO o_key, o_kind, o_title, o_score, o_matched;
    o_n := coalesce(cardinality(o_key), 0);
    -- Whether the overlay decides each key the base returned.
    drop_sql := format($q$SELECT coalesce(array_agg(EXISTS (SELECT 1 FROM mat_records u WHERE u.domain_id = %1$L AND u.branch_id = %2$L AND u.key = k.key)
                          OR (m.seq > %4$L AND NOT (%5$s)) ORDER BY k.o), '{}')
          FROM unnest($1::text[]) WITH ORDINALITY k(key, o)
          LEFT JOIN mat_records m ON m.domain_id = %1$L AND m.branch_id = %3$L AND m.key = k.key$q$,
                       d, ov, base, CASE WHEN moved THEN cs[2] ELSE hs[2] END, kept);
    o_full := (SELECT count(*) FROM unnest(o_matched) m WHERE m = nt);
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
        -- the overlay decides its key (an own row, or a base change after
        -- the fork).
        b_total := 0;
        b_capped := false;
        SELECT array_agg(s.key ORDER BY s.o) FILTER (WHERE s.match <> 'corrections'),
               array_agg(s.kind ORDER BY s.o) FILTER (WHERE s.match <> 'corrections'),
               array_agg(s.title ORDER BY s.o) FILTER (WHERE s.match <> 'corrections'),
               array_agg(s.score ORDER BY s.o) FILTER (WHERE s.match <> 'corrections'),
               array_agg(CASE WHEN s.match = 'full' THEN nt
                              ELSE (SELECT count(*) FILTER (WHERE m.search @@ t)::int FROM unnest(terms) t) END ORDER BY s.o)
                   FILTER (WHERE s.match <> 'corrections'),
               count(*) FILTER (WHERE s.match = 'full'), count(*) FILTER (WHERE s.match = 'partial'),
               max(s.ranked) FILTER (WHERE s.match = 'corrections'), bool_or(s.truncated) FILTER (WHERE s.match = 'corrections')
          INTO b_key, b_kind, b_title, b_score, b_matched, nf, np, b_total, b_capped
          FROM lb_search_run(d, base, true, ARRAY[base], ARRAY[hs[2]], ARRAY[hs[2]], terms, words, corrs, corr, p_kind, lim,
                             p_candidates, pmin + pextra, p_partial_candidates)
               WITH ORDINALITY s(key, kind, title, score, match, corrections, ranked, truncated, o)
          LEFT JOIN mat_records m ON m.domain_id = d AND m.branch_id = base AND m.key = s.key;
        EXECUTE drop_sql INTO b_drop USING b_key;
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
