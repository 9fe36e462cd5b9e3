-- lb_search_words_apply keeps mat_search_words: the rows of old_rows' keys
-- go, and every present row of new_rows adds one posting per word of its
-- search vector with its rank for that word alone (either table may be
-- absent: TG_OP says which). An update touches only the rows whose
-- search vector or deletion changed. Each statement is planned for the
-- rows at hand (EXECUTE): a plan cached from a one-row commit joins the
-- transition tables by nested loop, quadratic in a commit of thousands.
CREATE OR REPLACE FUNCTION lb_search_words_apply()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    IF TG_OP = 'INSERT' THEN
        EXECUTE $q$INSERT INTO mat_search_words (domain_id, branch_id, key, word, score)
        SELECT n.domain_id, n.branch_id, n.key, w,
               ts_rank(n.search, ('''' || replace(replace(w, '\', '\\'), '''', '''''') || '''')::tsquery)
          FROM new_rows n, unnest(tsvector_to_array(n.search)) w
         WHERE NOT n.deleted
         ORDER BY 1, 2, 3, 4$q$;
    ELSIF TG_OP = 'DELETE' THEN
        EXECUTE $q$DELETE FROM mat_search_words s
         USING old_rows o
         WHERE s.domain_id = o.domain_id AND s.branch_id = o.branch_id AND s.key = o.key$q$;
    ELSE
        EXECUTE $q$DELETE FROM mat_search_words s
         USING old_rows o JOIN new_rows n ON n.domain_id = o.domain_id AND n.branch_id = o.branch_id AND n.key = o.key
         WHERE s.domain_id = o.domain_id AND s.branch_id = o.branch_id AND s.key = o.key
           AND (o.search IS DISTINCT FROM n.search OR o.deleted IS DISTINCT FROM n.deleted)$q$;
        EXECUTE $q$INSERT INTO mat_search_words (domain_id, branch_id, key, word, score)
        SELECT n.domain_id, n.branch_id, n.key, w,
               ts_rank(n.search, ('''' || replace(replace(w, '\', '\\'), '''', '''''') || '''')::tsquery)
          FROM new_rows n JOIN old_rows o ON o.domain_id = n.domain_id AND o.branch_id = n.branch_id AND o.key = n.key,
               unnest(tsvector_to_array(n.search)) w
         WHERE NOT n.deleted AND (o.search IS DISTINCT FROM n.search OR o.deleted IS DISTINCT FROM n.deleted)
         ORDER BY 1, 2, 3, 4$q$;
    END IF;
    RETURN NULL;
END
$function$;
