-- The lexicon's own triggers again. lb_search_words_apply must then be the
-- version before 0017 (it also counts words): restore its file from that
-- version before migrating down, or the lexicon counts every change twice.
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
        -- UPDATE: only rows whose words changed contribute.
        WITH delta AS (
            SELECT domain_id, branch_id, w AS word, sum(n)::int AS n FROM (
                SELECT domain_id, branch_id, unnest(tsvector_to_array(search)) AS w, 1 AS n
                  FROM new_rows WHERE NOT deleted
                UNION ALL
                SELECT domain_id, branch_id, unnest(tsvector_to_array(search)), -1
                  FROM old_rows WHERE NOT deleted) x
             GROUP BY 1, 2, 3
            HAVING sum(n) <> 0)
        INSERT INTO mat_lexicon AS l (domain_id, branch_id, word, records)
        SELECT domain_id, branch_id, word, n FROM delta ORDER BY 1, 2, 3
        ON CONFLICT (domain_id, branch_id, word) DO UPDATE SET records = l.records + EXCLUDED.records;
        DELETE FROM mat_lexicon l
         USING (SELECT DISTINCT domain_id, branch_id FROM old_rows) o
         WHERE l.domain_id = o.domain_id AND l.branch_id = o.branch_id AND l.records <= 0
           AND l.word IN (SELECT unnest(tsvector_to_array(search)) FROM old_rows);
    END IF;
    RETURN NULL;
END
$function$;

CREATE TRIGGER mat_records_lexicon_ins AFTER INSERT ON mat_records
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lb_lexicon_apply();
CREATE TRIGGER mat_records_lexicon_upd AFTER UPDATE ON mat_records
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lb_lexicon_apply();
CREATE TRIGGER mat_records_lexicon_del AFTER DELETE ON mat_records
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION lb_lexicon_apply();
