-- lb_search_pairs: the best p_limit Records of branch b at its head
-- holding both words p_w1 and p_w2 (a query of two terms, one word each),
-- ranked by the sum of their two postings scores (twice ts_rank of the OR
-- of the words), exactly, without scoring any Record that cannot enter
-- them.
--
-- A word's postings take few distinct scores (lb_search_plateaus); a
-- Record holding both words scores a1 + a2 where a1 and a2 are plateaus
-- of each. The pairs of plateaus are read best sum first, each as the
-- Records both plateaus hold in key order (both are key-ordered ranges of
-- the rank index): a merge join of the two ranges, or, when one plateau
-- is small beside the other (its size counted up to p_count), one probe
-- of the other word's posting per Record of the small one; only as many
-- as the answer still needs are read. Once p_limit Records are read, no
-- pair left can beat them (pairs are read by their sum, best first; a
-- later pair of the same sum ties, and tied Records are interchangeable).
-- keys and scores are the Records read (every one of a pair after the
-- first Records read tie with them), complete says every pair was read
-- (keys holds every Record holding both words), pairs the pairs read.
-- keys is NULL when a word has p_max plateaus or more or more than
-- p_pairs pairs would be read: the caller takes another path.
CREATE OR REPLACE FUNCTION lb_search_pairs(d integer, b integer, p_w1 text, p_w2 text, p_limit integer, p_count integer DEFAULT 4096, p_max integer DEFAULT 256, p_pairs integer DEFAULT 64, OUT keys text[], OUT scores double precision[], OUT complete boolean, OUT pairs integer)
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
    r record;
    got text[];
BEGIN
    IF p_limit < 1 OR p_count < 1 OR p_max < 1 OR p_pairs < 1 THEN
        RAISE EXCEPTION 'lb_search_pairs: limit %, count %, max %, pairs %', p_limit, p_count, p_max, p_pairs
              USING ERRCODE = '22023';
    END IF;
    keys := '{}';
    scores := '{}';
    complete := false;
    pairs := 0;
    s1 := lb_search_plateaus(d, b, p_w1, p_max);
    s2 := lb_search_plateaus(d, b, p_w2, p_max);
    IF cardinality(s1) >= p_max OR cardinality(s2) >= p_max THEN
        keys := NULL;
        scores := NULL;
        RETURN;
    END IF;
    n1 := array_fill(NULL::int, ARRAY[cardinality(s1)]);
    n2 := array_fill(NULL::int, ARRAY[cardinality(s2)]);
    FOR r IN
        SELECT i, j, s1[i]::double precision + s2[j] AS s
          FROM generate_subscripts(s1, 1) i, generate_subscripts(s2, 1) j
         ORDER BY 3 DESC, 1, 2
    LOOP
        IF pairs >= p_pairs THEN
            keys := NULL;
            scores := NULL;
            RETURN;
        END IF;
        pairs := pairs + 1;
        IF n1[r.i] IS NULL THEN
            n1[r.i] := (SELECT count(*) FROM (SELECT FROM mat_search_words s
              WHERE s.domain_id = d AND s.branch_id = b AND s.word = p_w1 AND s.score = s1[r.i] LIMIT p_count) x);
        END IF;
        IF n2[r.j] IS NULL THEN
            n2[r.j] := (SELECT count(*) FROM (SELECT FROM mat_search_words s
              WHERE s.domain_id = d AND s.branch_id = b AND s.word = p_w2 AND s.score = s2[r.j] LIMIT p_count) x);
        END IF;
        IF n1[r.i] * 8 <= n2[r.j] THEN
            got := lb_search_pair_probe(d, b, p_w1, s1[r.i], p_w2, s2[r.j], p_limit - cardinality(keys));
        ELSIF n2[r.j] * 8 <= n1[r.i] THEN
            got := lb_search_pair_probe(d, b, p_w2, s2[r.j], p_w1, s1[r.i], p_limit - cardinality(keys));
        ELSE
            got := lb_search_pair_merge(d, b, p_w1, s1[r.i], p_w2, s2[r.j], p_limit - cardinality(keys));
        END IF;
        keys := keys || got;
        scores := scores || array_fill(r.s, ARRAY[cardinality(got)]);
        IF cardinality(keys) >= p_limit THEN
            RETURN;
        END IF;
    END LOOP;
    complete := true;
END
$function$;
