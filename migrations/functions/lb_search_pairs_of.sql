-- lb_search_pairs_of: lb_search_pairs of two words' score plateaus, each
-- read here (lb_search_word_plateaus) when its scores are NULL (only its
-- word given) and handed back with what was read and the sizes the pairs
-- counted: a caller pairing one word with several passes each word's on,
-- and no plateau is read or counted twice. A word given with its plateaus
-- was read with the same p_max, p_small and p_count.
CREATE OR REPLACE FUNCTION lb_search_pairs_of(d integer, b integer, INOUT p_x1 lb_search_word_plateaus, INOUT p_x2 lb_search_word_plateaus, p_limit integer, p_count integer DEFAULT 4096, p_max integer DEFAULT 256, p_pairs integer DEFAULT 64, p_small integer DEFAULT 512, OUT keys text[], OUT scores double precision[], OUT complete boolean, OUT pairs integer)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    s1 real[];
    s2 real[];
    n1 int[];
    n2 int[];
    top1 int := 0;
    top2 int := 0;
    r record;
    got text[];
    fk text[] := '{}';
    fs double precision[] := '{}';
    tk text[];
    ts double precision[];
    ahead int;
    cut boolean := false;
    m1 int;
    m2 int;
    w1 text;
    w2 text;
BEGIN
    IF p_limit < 1 OR p_count < 1 OR p_max < 1 OR p_pairs < 1 OR p_small < 0 THEN
        RAISE EXCEPTION 'lb_search_pairs_of: limit %, count %, max %, pairs %, small %', p_limit, p_count, p_max, p_pairs, p_small
              USING ERRCODE = '22023';
    END IF;
    complete := false;
    pairs := 0;
    -- The second word's plateaus are not read when the first has too many.
    IF p_x1.scores IS NULL THEN
        p_x1 := lb_search_word_plateaus(d, b, p_x1.word, p_max, p_small, p_count);
    END IF;
    IF cardinality(p_x1.scores) >= p_max THEN
        RETURN;
    END IF;
    IF p_x2.scores IS NULL THEN
        p_x2 := lb_search_word_plateaus(d, b, p_x2.word, p_max, p_small, p_count);
    END IF;
    IF cardinality(p_x2.scores) >= p_max THEN
        RETURN;
    END IF;
    w1 := p_x1.word;
    w2 := p_x2.word;
    s1 := p_x1.scores;
    s2 := p_x2.scores;
    -- Each word's best plateaus holding at most p_small postings together
    -- (lb_search_word_plateaus).
    n1 := p_x1.sizes;
    n2 := p_x2.sizes;
    top1 := p_x1.top;
    top2 := p_x2.top;
    IF top1 > 0 THEN
        SELECT t.keys, t.sums INTO fk, fs FROM lb_search_pair_top(d, b, w1, s1[top1], w2) t;
    END IF;
    IF top2 > 0 THEN
        -- A Record in the best plateaus of both words is read once.
        SELECT t.keys, t.sums INTO tk, ts FROM lb_search_pair_top(d, b, w2, s2[top2], w1) t;
        SELECT coalesce(array_agg(u.k), '{}'), coalesce(array_agg(u.s), '{}') INTO tk, ts
          FROM unnest(tk, ts) u(k, s)
         WHERE u.k <> ALL (fk);
        fk := fk || tk;
        fs := fs || ts;
    END IF;
    FOR r IN
        SELECT i, j, s1[i]::double precision + s2[j] AS s
          FROM generate_subscripts(s1, 1) i, generate_subscripts(s2, 1) j
         WHERE i > top1 AND j > top2
         ORDER BY 3 DESC, 1, 2
    LOOP
        ahead := (SELECT count(*) FROM unnest(fs) x WHERE x > r.s * (1 + 1e-6));
        IF ahead >= p_limit THEN
            cut := true;
            EXIT;
        END IF;
        IF pairs >= p_pairs THEN
            RETURN;
        END IF;
        pairs := pairs + 1;
        IF n1[r.i] IS NULL THEN
            n1[r.i] := lb_search_plateau_count(d, b, w1, s1[r.i], p_count);
        END IF;
        IF n2[r.j] IS NULL THEN
            n2[r.j] := lb_search_plateau_count(d, b, w2, s2[r.j], p_count);
        END IF;
        m1 := n1[r.i];
        m2 := n2[r.j];
        IF m1 * 8 > m2 AND m2 * 8 > m1 THEN
            -- Neither is small beside the other: their postings within the
            -- span of keys both cover may be.
            SELECT z.nx, z.ny INTO m1, m2 FROM lb_search_pair_span(d, b, w1, s1[r.i], w2, s2[r.j], p_count) z;
        END IF;
        IF m1 * 8 <= m2 THEN
            got := lb_search_pair_probe(d, b, w1, s1[r.i], w2, s2[r.j], p_limit - ahead);
        ELSIF m2 * 8 <= m1 THEN
            got := lb_search_pair_probe(d, b, w2, s2[r.j], w1, s1[r.i], p_limit - ahead);
        ELSE
            got := lb_search_pair_merge(d, b, w1, s1[r.i], w2, s2[r.j], p_limit - ahead);
        END IF;
        cut := cut OR cardinality(got) = p_limit - ahead;
        fk := fk || got;
        fs := fs || array_fill(r.s, ARRAY[cardinality(got)]);
    END LOOP;
    -- The sizes counted, handed back.
    p_x1.sizes := n1;
    p_x2.sizes := n2;
    complete := NOT cut AND cardinality(fk) <= p_limit;
    SELECT t.keys, t.scores INTO keys, scores FROM lb_search_keep_tied(fk, fs, p_limit) t;
END
$function$;
