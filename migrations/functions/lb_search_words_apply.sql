-- lb_search_words_apply keeps mat_search_words and mat_lexicon: the rows of
-- old_rows' keys go, and every present row of new_rows adds one posting per
-- word of its search vector with its rank for that word alone (either table
-- may be absent: TG_OP says which). An update touches only the rows whose
-- search vector or deletion changed, and of their postings only those whose
-- word or score changed (a renamed Record keeps most of its words' ranks):
-- the words gone are deleted, the new ones inserted, the others' scores
-- updated where they differ. An update that changes neither in any row
-- returns after one join of the transition tables.
--
-- The lexicon counts the present Records of a branch holding each word,
-- which is the number of the word's postings in that branch: it moves by
-- the postings each statement inserts and deletes (their RETURNING rows),
-- so a commit whose Records keep their words does not split their search
-- vectors a second time. A word whose count reaches 0 leaves the lexicon.
--
-- The statements look postings and lexicon rows up by the Domain and
-- branch of the transition tables as InitPlan values ((SELECT 7)), unknown
-- when planned: as constants, a Domain that the statistics do not know (a
-- new tenant beside a large one in its partition) is estimated at a row,
-- and the planner scans the branch's postings and lexicon once for each row
-- looked up (an update of 5 Records among 20,000: 0.9 to 1.5 s against
-- 1.3 ms, TestPostingsTriggerProbesByKeyForANewDomain under auto_explain's
-- analyze). Unknown, they are estimated as an average Domain's and the rows
-- are read through the primary keys; the Domain's partition is chosen when
-- the statement runs.
CREATE OR REPLACE FUNCTION lb_search_words_apply()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    db record;
    pairs int;
    changed boolean;
    -- lex applies the words' count changes of CTE delta (word, n): a word
    -- whose count reaches 0 is deleted, the others inserted or updated. The
    -- two statements touch disjoint words (decided on the lexicon as it was
    -- before the statement).
    lex CONSTANT text := $q$,
            cur AS (
                SELECT delta.word, delta.n, coalesce(l.records, 0) + delta.n AS records, l.word IS NOT NULL AS known
                  FROM delta LEFT JOIN mat_lexicon l ON l.domain_id = (SELECT %1$L::int) AND l.branch_id = (SELECT %2$L::int) AND l.word = delta.word),
            lex_gone AS (
                DELETE FROM mat_lexicon l USING cur
                 WHERE l.domain_id = (SELECT %1$L::int) AND l.branch_id = (SELECT %2$L::int) AND l.word = cur.word AND cur.known AND cur.records <= 0)
            INSERT INTO mat_lexicon AS l (domain_id, branch_id, word, records)
            SELECT %1$L, %2$L, cur.word, cur.n FROM cur WHERE cur.records > 0 ORDER BY cur.word
            ON CONFLICT (domain_id, branch_id, word) DO UPDATE SET records = l.records + EXCLUDED.records$q$;
BEGIN
    IF TG_OP = 'INSERT' THEN
        WITH added AS (
            INSERT INTO mat_search_words (domain_id, branch_id, key, word, score)
            SELECT n.domain_id, n.branch_id, n.key, w,
                   ts_rank(n.search, ('''' || replace(replace(w, '\', '\\'), '''', '''''') || '''')::tsquery)
              FROM new_rows n, unnest(tsvector_to_array(n.search)) w
             WHERE NOT n.deleted
             ORDER BY 1, 2, 3, 4
            RETURNING domain_id, branch_id, word)
        INSERT INTO mat_lexicon AS l (domain_id, branch_id, word, records)
        SELECT domain_id, branch_id, word, count(*)::int FROM added
         GROUP BY 1, 2, 3
         ORDER BY 1, 2, 3
        ON CONFLICT (domain_id, branch_id, word) DO UPDATE SET records = l.records + EXCLUDED.records;
    ELSIF TG_OP = 'DELETE' THEN
        FOR db IN SELECT DISTINCT o.domain_id, o.branch_id FROM old_rows o LOOP
            EXECUTE format($q$WITH gone AS (
                DELETE FROM mat_search_words s
                 WHERE s.domain_id = (SELECT %1$L::int) AND s.branch_id = (SELECT %2$L::int)
                   AND s.key = ANY (ARRAY(SELECT o.key FROM old_rows o WHERE o.domain_id = %1$L AND o.branch_id = %2$L))
                RETURNING s.word),
            delta AS (SELECT word, -count(*)::int AS n FROM gone GROUP BY word)$q$ || lex,
                db.domain_id, db.branch_id);
        END LOOP;
    ELSE
        -- An update that keeps every row's search vector and deletion (a
        -- commit of values that are not searched) moves no posting: one
        -- join of the transition tables says so, before the statements
        -- below are planned. EXECUTE plans it for this call's row counts: a
        -- static statement would keep, for the whole session, the plan made
        -- for the transition tables of its first call, and a nested loop
        -- planned for a one-row update compares every pair of rows of a
        -- later large one (25 million comparisons for 5,000 rows).
        EXECUTE $q$SELECT EXISTS (
            SELECT 1 FROM new_rows n JOIN old_rows o ON o.domain_id = n.domain_id AND o.branch_id = n.branch_id AND o.key = n.key
             WHERE o.search IS DISTINCT FROM n.search OR o.deleted IS DISTINCT FROM n.deleted)$q$ INTO changed;
        IF NOT changed THEN
            RETURN NULL;
        END IF;
        SELECT count(DISTINCT (n.domain_id, n.branch_id)) INTO pairs FROM new_rows n;
        FOR db IN SELECT DISTINCT n.domain_id, n.branch_id FROM new_rows n LOOP
            -- One Domain and branch (a commit): no filter on the
            -- transition tables, whose row estimates then stay whole and
            -- the planner hashes their join.
            EXECUTE format($q$WITH ch AS (
                SELECT n.key, CASE WHEN o.deleted THEN ''::tsvector ELSE o.search END AS os,
                       CASE WHEN n.deleted THEN ''::tsvector ELSE n.search END AS ns
                  FROM new_rows n JOIN old_rows o ON o.domain_id = n.domain_id AND o.branch_id = n.branch_id AND o.key = n.key
                 WHERE (o.search IS DISTINCT FROM n.search OR o.deleted IS DISTINCT FROM n.deleted)%3$s),
            np AS (
                SELECT ch.key, w AS word, ts_rank(ch.ns, ('''' || replace(replace(w, '\', '\\'), '''', '''''') || '''')::tsquery) AS score
                  FROM ch, unnest(tsvector_to_array(ch.ns)) w),
            op AS (
                SELECT ch.key, w AS word, ts_rank(ch.os, ('''' || replace(replace(w, '\', '\\'), '''', '''''') || '''')::tsquery) AS score
                  FROM ch, unnest(tsvector_to_array(ch.os)) w),
            gone AS (
                DELETE FROM mat_search_words s
                 USING (SELECT op.key, op.word FROM op EXCEPT SELECT np.key, np.word FROM np) x
                 WHERE s.domain_id = (SELECT %1$L::int) AND s.branch_id = (SELECT %2$L::int) AND s.key = x.key AND s.word = x.word
                RETURNING s.word),
            moved AS (
                UPDATE mat_search_words s SET score = x.score
                  FROM (SELECT np.key, np.word, np.score FROM np JOIN op ON op.key = np.key AND op.word = np.word
                         WHERE op.score <> np.score) x
                 WHERE s.domain_id = (SELECT %1$L::int) AND s.branch_id = (SELECT %2$L::int) AND s.key = x.key AND s.word = x.word),
            added AS (
                INSERT INTO mat_search_words (domain_id, branch_id, key, word, score)
                SELECT %1$L, %2$L, np.key, np.word, np.score
                  FROM np
                 WHERE NOT EXISTS (SELECT 1 FROM op WHERE op.key = np.key AND op.word = np.word)
                 ORDER BY np.key, np.word
                RETURNING word),
            delta AS (
                SELECT word, sum(n)::int AS n
                  FROM (SELECT word, 1 AS n FROM added UNION ALL SELECT word, -1 FROM gone) x
                 GROUP BY word
                HAVING sum(n) <> 0)$q$ || lex,
                db.domain_id, db.branch_id,
                CASE WHEN pairs > 1 THEN format(' AND n.domain_id = %L AND n.branch_id = %L', db.domain_id, db.branch_id) ELSE '' END);
        END LOOP;
    END IF;
    RETURN NULL;
END
$function$;
