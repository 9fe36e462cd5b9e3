-- lb_lexeme: the word w as one quoted lexeme of a tsquery ('w', quotes
-- and backslashes escaped), so that (lb_lexeme(w))::tsquery matches w
-- whatever characters it holds.
CREATE OR REPLACE FUNCTION lb_lexeme(w text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
SELECT '''' || replace(replace(w, '\', '\\'), '''', '''''') || ''''
$function$;
