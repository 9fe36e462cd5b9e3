-- lb_search_words_sql: the statement of a one-word query's full match on
-- branch b at its head (lb_search_words), for lb_search_sql.
CREATE OR REPLACE FUNCTION lb_search_words_sql(d integer, b integer, p_word text, p_limit integer)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT * FROM lb_search_words(%L, %L, %L, %s)$q$, d, b, p_word, p_limit)
$function$;
