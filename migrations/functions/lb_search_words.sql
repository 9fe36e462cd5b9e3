-- lb_search_words: the full match of a one-word query on branch b at its
-- head, from the word's postings best first (mat_search_words): the exact
-- top p_limit by (rank, key) whatever the number of matches, which ranked
-- reports from the lexicon. A single SELECT in SQL, which the planner
-- inlines: lb_search_run reads it by a static statement whose plan the
-- session keeps, and lb_search_words_sql names it for lb_search_sql.
CREATE OR REPLACE FUNCTION lb_search_words(d integer, b integer, p_word text, p_limit integer)
 RETURNS TABLE(key text, kind text, title text, score real, match text, corrections jsonb, ranked integer, truncated boolean)
 LANGUAGE sql
 STABLE
AS $function$
SELECT m.key::text, m.kind::text, m.title, w.score, 'full'::text, NULL::jsonb,
       coalesce((SELECT l.records FROM mat_lexicon l WHERE l.domain_id = d AND l.branch_id = b AND l.word = p_word), 0),
       false
  FROM (SELECT s.key, s.score FROM mat_search_words s
         WHERE s.domain_id = d AND s.branch_id = b AND s.word = p_word
         ORDER BY s.score DESC, s.key
         LIMIT p_limit) w
  JOIN mat_records m ON m.domain_id = d AND m.branch_id = b AND m.key = w.key AND NOT m.deleted
 ORDER BY w.score DESC, w.key
$function$;
