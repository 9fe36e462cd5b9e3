-- lb_lexicon_apply adds the word counts of the rows in new_rows and
-- subtracts those of old_rows (either may be absent: TG_OP says which).
CREATE OR REPLACE FUNCTION lb_lexicon_apply()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO mat_lexicon AS l (domain_id, branch_id, word, records)
        SELECT domain_id, branch_id, w, count(*)::int
          FROM new_rows, unnest(tsvector_to_array(search)) w
         WHERE NOT deleted
         GROUP BY 1, 2, 3
         ORDER BY 1, 2, 3
        ON CONFLICT (domain_id, branch_id, word) DO UPDATE SET records = l.records + EXCLUDED.records;
    ELSIF TG_OP = 'DELETE' THEN
        WITH delta AS (
            SELECT domain_id, branch_id, w AS word, count(*)::int AS n
              FROM old_rows, unnest(tsvector_to_array(search)) w
             WHERE NOT deleted
             GROUP BY 1, 2, 3)
        UPDATE mat_lexicon l SET records = l.records - delta.n
          FROM delta
         WHERE l.domain_id = delta.domain_id AND l.branch_id = delta.branch_id AND l.word = delta.word;
        DELETE FROM mat_lexicon l
         USING (SELECT DISTINCT domain_id, branch_id FROM old_rows) o
         WHERE l.domain_id = o.domain_id AND l.branch_id = o.branch_id AND l.records <= 0
           AND l.word IN (SELECT unnest(tsvector_to_array(search)) FROM old_rows);
    ELSE
        -- UPDATE: only rows whose words changed contribute (a row is paired
        -- with its old version by its key; most updates keep the words).
        WITH pairs AS (
            SELECT coalesce(n.domain_id, o.domain_id) AS domain_id, coalesce(n.branch_id, o.branch_id) AS branch_id,
                   CASE WHEN n.deleted THEN NULL ELSE n.search END AS new_search,
                   CASE WHEN o.deleted THEN NULL ELSE o.search END AS old_search
              FROM new_rows n
              FULL JOIN old_rows o ON o.domain_id = n.domain_id AND o.branch_id = n.branch_id AND o.key = n.key),
        delta AS (
            SELECT domain_id, branch_id, w AS word, sum(n)::int AS n FROM (
                SELECT domain_id, branch_id, unnest(tsvector_to_array(new_search)) AS w, 1 AS n
                  FROM pairs WHERE new_search IS DISTINCT FROM old_search AND new_search IS NOT NULL
                UNION ALL
                SELECT domain_id, branch_id, unnest(tsvector_to_array(old_search)), -1
                  FROM pairs WHERE new_search IS DISTINCT FROM old_search AND old_search IS NOT NULL) x
             GROUP BY 1, 2, 3
            HAVING sum(n) <> 0)
        INSERT INTO mat_lexicon AS l (domain_id, branch_id, word, records)
        SELECT domain_id, branch_id, word, n FROM delta ORDER BY 1, 2, 3
        ON CONFLICT (domain_id, branch_id, word) DO UPDATE SET records = l.records + EXCLUDED.records;
        -- Only the words of changed old rows can have dropped to zero.
        DELETE FROM mat_lexicon l
         USING (SELECT DISTINCT o.domain_id, o.branch_id, w AS word
                  FROM old_rows o
                  LEFT JOIN new_rows n ON n.domain_id = o.domain_id AND n.branch_id = o.branch_id AND n.key = o.key
                 CROSS JOIN LATERAL unnest(tsvector_to_array(o.search)) w
                 WHERE NOT o.deleted AND (n.key IS NULL OR n.deleted OR n.search IS DISTINCT FROM o.search)) g
         WHERE l.domain_id = g.domain_id AND l.branch_id = g.branch_id AND l.word = g.word AND l.records <= 0;
    END IF;
    RETURN NULL;
END
$function$;
