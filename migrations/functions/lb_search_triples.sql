-- lb_search_triples: the best p_limit Records of branch b at its head
-- holding the three words p_w (a query of three terms, one word each),
-- ranked by the sum of their three postings scores (three times ts_rank of
-- the OR of the words), exactly, without scoring every Record holding all
-- three: lb_search_pairs for three words.
--
-- A Record holding the three words scores a1 + a2 + a3, a plateau of each
-- (lb_search_plateaus). The triples of plateaus are visited best sum
-- first; a triple is settled once one of its plateaus, or the meeting of
-- two of them, was read whole. The next triple not settled is read by one
-- of three means, all from the GIN index of the plateaus' tokens
-- (migration 0027): its smallest plateau read whole with the Records
-- holding the other two words, which settles every triple of that
-- plateau, when that plateau holds at most p_small postings or is 8 times
-- smaller than the next smallest; or else the meeting of its two smaller
-- plateaus read from its rows, each checked for the third word
-- (lb_search_triple_rows), which settles every triple of those two
-- plateaus, when at most p_pair Records hold both; or else the meeting of
-- the triple's three plateaus alone (lb_search_triple_meet), the AND of
-- three tokens, of which as many Records as the answer still needs. The
-- meeting of three plateaus of common words is mostly empty and decodes
-- their posting lists all the same (at 10M pump panel valve met six
-- triples a call, 51,494 postings read; with the meetings of two of its
-- plateaus read from their rows, none, 35,106 postings read, and the call
-- took 13-14 ms against 37-40): with the meetings of two, the 55 calls of
-- searchcalls' partial matching and entity resolution that took the
-- triples before took 1,389 ms in all against 2,306 (means of three runs
-- each way), 50 of them faster, one slower (order copper steel 31 ms
-- against 27).
-- When more than p_pair Records hold the two plateaus, the rows read
-- (p_pair + 1, their Records holding the third word with their exact
-- sums) are kept; the meeting of three follows unless they make, with the
-- Records read before, p_limit Records scoring at least the triple's sum
-- (then none unread scores more: reading stops). A plateau is read whole
-- from its token alone, each of its rows checked for the other two words
-- (lb_search_triple_rows), when p_rows times its postings are at most the
-- Records holding those words; else as
-- the AND of its token with the other words' tokens
-- (lb_search_triple_top), which decodes the other words' posting lists
-- whole: at 10M 15 ms for a plateau of valve's 580 postings beside bolt
-- and steel (6.3M Records), against 1.8 ms for its 580 rows (the 30 calls
-- of three common words of searchcalls' partial matching 3,249-3,415 ms in
-- all with the AND, 2,269-2,372 with the rows, and 2,028-2,070 with
-- plateaus of up to 4,096 postings read whole rather than 1,024). The
-- meeting grows with the postings of its lists (at 10M twelve meetings
-- whose smallest plateau held 2,650 postings or more took 3.6 ms on
-- average; valve's plateau of 13,600 read whole 29 ms in the index). The
-- rule and the order below were tuned when the meeting was a merge of two
-- plateaus' postings in key order (at 10M the merge of 13,600 and 82,000
-- postings took 0.1 to 0.2 s, probes of a plateau of 12,560 in the
-- postings 1.3 s) and are kept as they were, but for p_small (above) and
-- the cap on counting: sizes are counted up to p_count + 1
-- (lb_search_plateau_reach; 4,096 since the index: at 10M the 18
-- three-common-word queries of searchcalls' partial matching took 1,588 to
-- 1,683 ms in all in three runs, second calls in psql, against 2,141 to
-- 2,455 in three with 16,384); plateaus counted to the cap rank by how far
-- their counted keys reach, the sparser first (ranked in word order, a
-- merge at 10M of steel bolt copper read steel's 666,490 postings where
-- copper's 81,620 would do: 755 ms against 317 for the call with this order
-- alone), and the next smallest's size, when the smallest was counted
-- whole, is estimated from the share of the smallest's keys within its
-- reach (197 ms with both, best of two calls). Reading stops when p_limit
-- Records read score at least the next triple's sum: no Record unread can
-- beat them (a Record of a later triple of the same sum ties, and tied
-- Records are interchangeable).
-- keys and scores are the best p_limit Records read, best first (score,
-- then key); complete says every Record holding the three words was read
-- (keys holds them all when they are at most p_limit); reads counts the
-- postings read (plateaus read whole, and the two smaller of each
-- meeting, of two or of three, each plateau's size counted up to p_count +
-- 1); keys
-- is NULL when a word has p_max plateaus or more or reading would pass
-- p_budget postings: the caller takes another path.
CREATE OR REPLACE FUNCTION lb_search_triples(d integer, b integer, p_w text[], p_limit integer, p_small integer DEFAULT 4096, p_count integer DEFAULT 4096, p_max integer DEFAULT 64, p_budget integer DEFAULT 2000000, p_rows integer DEFAULT 1000, p_pair integer DEFAULT 1000, OUT keys text[], OUT scores double precision[], OUT complete boolean, OUT reads integer)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    s1 real[];
    s2 real[];
    s3 real[];
    n1 int[];
    n2 int[];
    n3 int[];
    k1 text[];
    k2 text[];
    k3 text[];
    kr text[];
    tn int;
    tk text;
    est bigint;
    c2 int;
    r1 boolean[];
    r2 boolean[];
    r3 boolean[];
    r record;
    sz int[];
    ord int[];
    sc real[];
    got text[];
    gs double precision[];
    fk text[] := '{}';
    fs double precision[] := '{}';
    ahead int;
    cut boolean := false;
    wn bigint[];
    p12 boolean[];
    p13 boolean[];
    p23 boolean[];
    seen int;
    mk text[];
    above int;
    done boolean := false;
BEGIN
    IF cardinality(p_w) <> 3 OR p_limit < 1 OR p_small < 0 OR p_count < 1 OR p_max < 1 OR p_budget < 0 OR p_rows < 0 OR p_pair < 0 THEN
        RAISE EXCEPTION 'lb_search_triples: % words, limit %, small %, count %, max %, budget %, rows %, pair %',
              cardinality(p_w), p_limit, p_small, p_count, p_max, p_budget, p_rows, p_pair USING ERRCODE = '22023';
    END IF;
    complete := false;
    reads := 0;
    -- The Records holding each word (the lexicon's counts, by its primary
    -- key): what the GIN index's AND of a plateau with the other two words
    -- decodes.
    wn := ARRAY(SELECT coalesce((SELECT l.records FROM mat_lexicon l
                                 WHERE l.domain_id = d AND l.branch_id = b AND l.word = u.w), 0)::bigint
                  FROM unnest(p_w) WITH ORDINALITY u(w, o)
                 ORDER BY u.o);
    s1 := lb_search_plateaus(d, b, p_w[1], p_max);
    s2 := lb_search_plateaus(d, b, p_w[2], p_max);
    s3 := lb_search_plateaus(d, b, p_w[3], p_max);
    IF cardinality(s1) >= p_max OR cardinality(s2) >= p_max OR cardinality(s3) >= p_max THEN
        RETURN;
    END IF;
    n1 := array_fill(NULL::int, ARRAY[cardinality(s1)]);
    n2 := array_fill(NULL::int, ARRAY[cardinality(s2)]);
    n3 := array_fill(NULL::int, ARRAY[cardinality(s3)]);
    r1 := array_fill(false, ARRAY[cardinality(s1)]);
    r2 := array_fill(false, ARRAY[cardinality(s2)]);
    r3 := array_fill(false, ARRAY[cardinality(s3)]);
    k1 := array_fill(NULL::text, ARRAY[cardinality(s1)]);
    k2 := array_fill(NULL::text, ARRAY[cardinality(s2)]);
    k3 := array_fill(NULL::text, ARRAY[cardinality(s3)]);
    p12 := array_fill(false, ARRAY[cardinality(s1) * cardinality(s2)]);
    p13 := array_fill(false, ARRAY[cardinality(s1) * cardinality(s3)]);
    p23 := array_fill(false, ARRAY[cardinality(s2) * cardinality(s3)]);
    FOR r IN
        SELECT i, j, k, s1[i]::double precision + s2[j] + s3[k] AS s
          FROM generate_subscripts(s1, 1) i, generate_subscripts(s2, 1) j, generate_subscripts(s3, 1) k
         ORDER BY 4 DESC, 1, 2, 3
    LOOP
        CONTINUE WHEN r1[r.i] OR r2[r.j] OR r3[r.k] OR p12[(r.i - 1) * cardinality(s2) + r.j]
                      OR p13[(r.i - 1) * cardinality(s3) + r.k] OR p23[(r.j - 1) * cardinality(s3) + r.k];
        ahead := (SELECT count(*) FROM unnest(fs) x WHERE x >= r.s);
        IF ahead >= p_limit THEN
            cut := true;
            EXIT;
        END IF;
        IF n1[r.i] IS NULL THEN
            SELECT z.n, z.reach INTO tn, tk FROM lb_search_plateau_reach(d, b, p_w[1], s1[r.i], p_count + 1) z;
            n1[r.i] := tn;
            k1[r.i] := tk;
        END IF;
        IF n2[r.j] IS NULL THEN
            SELECT z.n, z.reach INTO tn, tk FROM lb_search_plateau_reach(d, b, p_w[2], s2[r.j], p_count + 1) z;
            n2[r.j] := tn;
            k2[r.j] := tk;
        END IF;
        IF n3[r.k] IS NULL THEN
            SELECT z.n, z.reach INTO tn, tk FROM lb_search_plateau_reach(d, b, p_w[3], s3[r.k], p_count + 1) z;
            n3[r.k] := tn;
            k3[r.k] := tk;
        END IF;
        sz := ARRAY[n1[r.i], n2[r.j], n3[r.k]];
        sc := ARRAY[s1[r.i], s2[r.j], s3[r.k]];
        -- The words by their plateau's size in this triple, smallest first.
        kr := ARRAY[k1[r.i], k2[r.j], k3[r.k]];
        ord := ARRAY(SELECT x FROM unnest(sz, kr) WITH ORDINALITY u(n, kk, x) ORDER BY u.n, u.kk COLLATE "C" DESC, u.x);
        est := sz[ord[2]];
        IF sz[ord[1]] > p_small AND sz[ord[1]] <= p_count AND sz[ord[2]] > p_count THEN
            -- The second plateau counted to the cap only: its size
            -- estimated from how far its first p_count + 1 keys reach, by
            -- the share of the smallest plateau's keys within that reach.
            c2 := lb_search_plateau_count(d, b, p_w[ord[1]], sc[ord[1]], '', kr[ord[2]], sz[ord[1]] + 1);
            reads := reads + c2;
            est := (p_count + 1)::bigint * sz[ord[1]] / greatest(c2, 1);
        END IF;
        IF sz[ord[1]] <= p_small OR sz[ord[1]]::bigint * 8 <= est THEN
            -- The smallest plateau whole: every triple it is in settled.
            reads := reads + sz[ord[1]];
            EXIT WHEN reads > p_budget;
            IF sz[ord[1]]::bigint * p_rows <= wn[ord[2]] + wn[ord[3]] THEN
                SELECT t.keys, t.sums INTO got, gs FROM lb_search_triple_rows(d, b, p_w, ARRAY[ord[1]], ARRAY[sc[ord[1]]]) t;
            ELSE
                SELECT t.keys, t.sums INTO got, gs
                  FROM lb_search_triple_top(d, b, p_w, ord[1], sc[ord[1]],
                                            CASE ord[1] WHEN 1 THEN s2 ELSE s1 END, CASE ord[1] WHEN 3 THEN s2 ELSE s3 END) t;
            END IF;
            CASE ord[1] WHEN 1 THEN r1[r.i] := true; WHEN 2 THEN r2[r.j] := true; ELSE r3[r.k] := true; END CASE;
        ELSE
            reads := reads + sz[ord[1]] + sz[ord[2]];
            EXIT WHEN reads > p_budget;
            got := '{}';
            gs := '{}';
            seen := NULL;
            IF p_pair > 0 THEN
                -- The meeting of the two smaller plateaus from its rows,
                -- each checked for the third word: every triple of those
                -- two plateaus settled, unless more than p_pair Records
                -- hold both.
                SELECT t.keys, t.sums, t.seen INTO got, gs, seen
                  FROM lb_search_triple_rows(d, b, p_w, ord[1:2], ARRAY[sc[ord[1]], sc[ord[2]]], p_pair) t;
            END IF;
            IF seen <= p_pair THEN
                CASE ord[3] WHEN 3 THEN p12[(r.i - 1) * cardinality(s2) + r.j] := true;
                            WHEN 2 THEN p13[(r.i - 1) * cardinality(s3) + r.k] := true;
                            ELSE p23[(r.j - 1) * cardinality(s3) + r.k] := true; END CASE;
            ELSIF seen > p_pair AND (SELECT count(DISTINCT u.k) FROM (SELECT * FROM unnest(fk, fs) UNION ALL SELECT * FROM unnest(got, gs)) u(k, s)
                                     WHERE u.s >= r.s) >= p_limit THEN
                -- Some of the Records holding both, read before the cap,
                -- with those read before, make p_limit Records scoring at
                -- least this triple's sum: none unread scores more.
                cut := true;
                done := true;
            ELSE
                -- The meeting of the three; the Records holding two read
                -- before the cap, if any, are kept too. Records of this
                -- triple may have been read before, past the cap of a
                -- meeting of two: as many are read as the answer needs
                -- beside those scoring more than the triple's sum, not
                -- beside every one scoring as much (the first in key
                -- order may be those read).
                above := (SELECT count(*) FROM unnest(fs) x WHERE x > r.s);
                mk := lb_search_triple_meet(d, b, p_w[ord[1]], sc[ord[1]], p_w[ord[2]], sc[ord[2]], p_w[ord[3]], sc[ord[3]],
                                            p_limit - above);
                cut := cut OR cardinality(mk) = p_limit - above;
                got := got || mk;
                gs := gs || array_fill(r.s, ARRAY[cardinality(mk)]);
            END IF;
        END IF;
        -- Keep the best p_limit + 1 Records read, each once (a Record is
        -- read again when a plateau it is in is read whole after its triple
        -- was merged or another of its plateaus read).
        SELECT coalesce(array_agg(u.k ORDER BY u.s DESC, u.k), '{}'), coalesce(array_agg(u.s ORDER BY u.s DESC, u.k), '{}')
          INTO fk, fs
          FROM (SELECT w.k, w.s
                  FROM (SELECT DISTINCT ON (v.k) v.k, v.s
                          FROM (SELECT * FROM unnest(fk, fs) UNION ALL SELECT * FROM unnest(got, gs)) v(k, s)
                         ORDER BY v.k, v.s DESC) w
                 ORDER BY w.s DESC, w.k LIMIT p_limit + 1) u;
        EXIT WHEN done;
    END LOOP;
    IF reads > p_budget THEN
        RETURN;
    END IF;
    complete := NOT cut AND cardinality(fk) <= p_limit;
    keys := fk[1:p_limit];
    scores := fs[1:p_limit];
END
$function$;
