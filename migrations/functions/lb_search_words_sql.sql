-- lb_search_words_sql: the full match of a one-word query on branch b at
-- its head, from the word's postings best first (mat_search_words): the
-- exact top p_limit by (rank, key) whatever the number of matches, which
-- ranked reports from the lexicon.
CREATE OR REPLACE FUNCTION lb_search_words_sql(d integer, b integer, p_word text, p_limit integer)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT m.key::text, m.kind::text, m.title, w.score, 'full'::text AS match, NULL::jsonb AS corrections,
       coalesce((SELECT l.records FROM mat_lexicon l WHERE l.domain_id = %1$L AND l.branch_id = %2$L AND l.word = %3$L), 0) AS ranked,
       false AS truncated
  FROM (SELECT s.key, s.score FROM mat_search_words s
         WHERE s.domain_id = %1$L AND s.branch_id = %2$L AND s.word = %3$L
         ORDER BY s.score DESC, s.key
         LIMIT %4$s) w
  JOIN mat_records m ON m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = w.key AND NOT m.deleted
 ORDER BY w.score DESC, w.key$q$, d, b, p_word, p_limit)
$function$;
