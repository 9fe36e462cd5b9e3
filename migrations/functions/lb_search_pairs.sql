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
-- takes another path. lb_search_pairs_of reads and pairs them.
CREATE OR REPLACE FUNCTION lb_search_pairs(d integer, b integer, p_w1 text, p_w2 text, p_limit integer, p_small integer DEFAULT 512, p_count integer DEFAULT 4096, p_max integer DEFAULT 256, p_pairs integer DEFAULT 64, OUT keys text[], OUT scores double precision[], OUT complete boolean, OUT pairs integer)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    IF p_limit < 1 OR p_small < 0 OR p_count < 1 OR p_max < 1 OR p_pairs < 1 THEN
        RAISE EXCEPTION 'lb_search_pairs: limit %, small %, count %, max %, pairs %', p_limit, p_small, p_count, p_max, p_pairs
              USING ERRCODE = '22023';
    END IF;
    SELECT z.keys, z.scores, z.complete, z.pairs INTO keys, scores, complete, pairs
      FROM lb_search_pairs_of(d, b, ROW(p_w1, NULL, NULL, NULL)::lb_search_word_plateaus,
                              ROW(p_w2, NULL, NULL, NULL)::lb_search_word_plateaus,
                              p_limit, p_count, p_max, p_pairs, p_small) z;
END
$function$;
