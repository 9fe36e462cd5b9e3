-- lb_search_or_sql: the full match of a one-term query whose term is the
-- OR of several words (a misspelled word and its corrections) on branch b
-- at its head, exactly, from the words' postings: p_words are the term's
-- words that some Record holds. A Record holding one of them ranks by that
-- word's rank alone (ts_rank of an OR sums its present words' ranks over
-- the number of words), so it is in the results only if it is in the best
-- p_limit of that word's postings; a Record holding two or more is found by
-- the GIN index (the AND of each pair, cheap when one of the pair is rare:
-- lb_search checks the lexicon first). Every candidate is scored by
-- ts_rank of the term itself. ranked is the number of Records matching.
CREATE OR REPLACE FUNCTION lb_search_or_sql(d integer, b integer, p_words text[], p_counts bigint[], term tsquery, p_limit integer)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$WITH several AS (%5$s),
cand AS (%6$s UNION SELECT key FROM several)
SELECT m.key::text, m.kind::text, m.title, ts_rank(m.search, %3$L::tsquery) AS score, 'full'::text AS match, NULL::jsonb AS corrections,
       (%7$s - (SELECT coalesce(sum(s.n - 1), 0) FROM several s))::integer AS ranked, false AS truncated
  FROM cand JOIN mat_records m ON m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = cand.key AND NOT m.deleted
 ORDER BY score DESC, m.key
 LIMIT %4$s$q$, d, b, term::text, p_limit,
    -- The Records holding two words or more, with how many they hold.
    -- The Domain and branch are compared as bigint: the partition is still
    -- pruned (hash partitioning compares across integer types), but the
    -- GIN index, whose btree_gin columns know int4 only, is scanned for the
    -- words alone, not for the Domain's and branch's entries that list
    -- every Record of the branch (measured at 10M for shim & shipment:
    -- 99 index buffers against 8,321, 21 against 197 ms in the index,
    -- docs/perf/typo-gin-10m.txt). Other Domains'
    -- Records of the partition the words find are dropped by the filter.
    coalesce((SELECT format($s$SELECT m.key, (%s) AS n FROM mat_records m
                 WHERE m.domain_id = %L::bigint AND m.branch_id = %L::bigint AND NOT m.deleted AND (%s)$s$,
                 (SELECT string_agg(format('(m.search @@ %L::tsquery)::int', lb_lexeme(w)), ' + ') FROM unnest(p_words) w),
                 d, b,
                 string_agg(format('m.search @@ %L::tsquery', lb_lexeme(x.w) || ' & ' || lb_lexeme(y.w)), ' OR '))
                FROM unnest(p_words) WITH ORDINALITY x(w, i), unnest(p_words) WITH ORDINALITY y(w, j)
               WHERE x.i < y.j
              HAVING count(*) > 0),
             'SELECT NULL::text AS key, 0 AS n WHERE false'),
    -- The best p_limit postings of each word.
    (SELECT string_agg(format($w$(SELECT s.key FROM mat_search_words s
                 WHERE s.domain_id = %L AND s.branch_id = %L AND s.word = %L
                 ORDER BY s.score DESC, s.key LIMIT %s)$w$, d, b, w, p_limit), ' UNION ')
       FROM unnest(p_words) w),
    (SELECT coalesce(sum(n), 0) FROM unnest(p_counts) n))
$function$;
