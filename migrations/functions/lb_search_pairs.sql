-- lb_search_pairs: the best p_limit Records of branch b at its head
-- holding both words p_w1 and p_w2 (a query of two terms, one word each),
-- ranked by the sum of their two postings scores (twice ts_rank of the OR
-- of the words), exactly, without scoring every Record holding both.
--
-- A word's postings take few distinct scores (lb_search_plateaus), each a
-- key-ordered range of the rank index; a Record holding both words scores
-- a1 + a2 where a1 and a2 are plateaus of each. First, each word's best
-- plateaus, as many as hold at most p_small postings together, are read
-- whole and each of their Records scored by one probe of the other word's
-- posting (lb_search_pair_top). Every other Record holding both words is
-- in a pair of the words' remaining plateaus: the pairs are read best sum
-- first, each as the Records both plateaus hold in key order, a merge join
-- of the two ranges (lb_search_pair_merge) or, when one plateau is small
-- beside the other (sizes counted up to p_count; when neither is, their
-- postings within the span of keys both cover, lb_search_pair_span), one
-- probe per Record of the small one (lb_search_pair_probe), only as many
-- as the answer still needs. Ties are decided by key over every Record
-- of the tied score: sums within a millionth of each other are tied (two
-- sums that differ in their last bits give one ts_rank, a real), a pair
-- is read for its first p_limit Records in key order less those read that
-- score above it by more than that, and reading stops when p_limit
-- Records read score above the next pair's sum by more than that.
-- keys and scores are the best p_limit Records read and every Record read
-- tied with the p_limit-th (within a millionth), best first (score, then
-- key): the caller ranks them by their ts_rank and key and keeps p_limit;
-- complete says every Record holding both words was read (keys holds
-- them all when they are at most p_limit); pairs counts the pairs read
-- after the best plateaus. keys is NULL when a word has p_max
-- plateaus or more or more than p_pairs pairs would be read: the caller
-- takes another path.
CREATE OR REPLACE FUNCTION lb_search_pairs(d integer, b integer, p_w1 text, p_w2 text, p_limit integer, p_small integer DEFAULT 512, p_count integer DEFAULT 4096, p_max integer DEFAULT 256, p_pairs integer DEFAULT 64, OUT keys text[], OUT scores double precision[], OUT complete boolean, OUT pairs integer)
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
BEGIN
    IF p_limit < 1 OR p_small < 0 OR p_count < 1 OR p_max < 1 OR p_pairs < 1 THEN
        RAISE EXCEPTION 'lb_search_pairs: limit %, small %, count %, max %, pairs %', p_limit, p_small, p_count, p_max, p_pairs
              USING ERRCODE = '22023';
    END IF;
    complete := false;
    pairs := 0;
    s1 := lb_search_plateaus(d, b, p_w1, p_max);
    s2 := lb_search_plateaus(d, b, p_w2, p_max);
    IF cardinality(s1) >= p_max OR cardinality(s2) >= p_max THEN
        RETURN;
    END IF;
    -- Each word's best plateaus holding at most p_small postings together.
    SELECT z.sizes, z.top INTO n1, top1 FROM lb_search_plateau_sizes(d, b, p_w1, s1, p_small, p_count) z;
    SELECT z.sizes, z.top INTO n2, top2 FROM lb_search_plateau_sizes(d, b, p_w2, s2, p_small, p_count) z;
    IF top1 > 0 THEN
        SELECT t.keys, t.sums INTO fk, fs FROM lb_search_pair_top(d, b, p_w1, s1[top1], p_w2) t;
    END IF;
    IF top2 > 0 THEN
        -- A Record in the best plateaus of both words is read once.
        SELECT t.keys, t.sums INTO tk, ts FROM lb_search_pair_top(d, b, p_w2, s2[top2], p_w1) t;
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
            n1[r.i] := lb_search_plateau_count(d, b, p_w1, s1[r.i], p_count);
        END IF;
        IF n2[r.j] IS NULL THEN
            n2[r.j] := lb_search_plateau_count(d, b, p_w2, s2[r.j], p_count);
        END IF;
        m1 := n1[r.i];
        m2 := n2[r.j];
        IF m1 * 8 > m2 AND m2 * 8 > m1 THEN
            -- Neither is small beside the other: their postings within the
            -- span of keys both cover may be.
            SELECT z.nx, z.ny INTO m1, m2 FROM lb_search_pair_span(d, b, p_w1, s1[r.i], p_w2, s2[r.j], p_count) z;
        END IF;
        IF m1 * 8 <= m2 THEN
            got := lb_search_pair_probe(d, b, p_w1, s1[r.i], p_w2, s2[r.j], p_limit - ahead);
        ELSIF m2 * 8 <= m1 THEN
            got := lb_search_pair_probe(d, b, p_w2, s2[r.j], p_w1, s1[r.i], p_limit - ahead);
        ELSE
            got := lb_search_pair_merge(d, b, p_w1, s1[r.i], p_w2, s2[r.j], p_limit - ahead);
        END IF;
        cut := cut OR cardinality(got) = p_limit - ahead;
        fk := fk || got;
        fs := fs || array_fill(r.s, ARRAY[cardinality(got)]);
    END LOOP;
    complete := NOT cut AND cardinality(fk) <= p_limit;
    SELECT t.keys, t.scores INTO keys, scores FROM lb_search_keep_tied(fk, fs, p_limit) t;
END
$function$;
