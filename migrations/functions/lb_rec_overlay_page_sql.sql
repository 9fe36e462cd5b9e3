-- lb_rec_overlay_page_sql: the statement of an overlay's page or attribute
-- query (lb_page_sql, lb_query_by_attribute_sql): lb_rec_prepared running
-- lb_rec_overlay_page_stmt with the value as $1 and the page's start as $2,
-- so the statement is planned once a session, not on every call.
CREATE OR REPLACE FUNCTION lb_rec_overlay_page_sql(d integer, bs integer[], cs bigint[], hs bigint[], p_kind text, p_attribute text, p_value text, after text, p_limit integer)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
SELECT format('SELECT * FROM lb_rec_prepared(%L, %L, %L)',
              lb_rec_overlay_page_stmt(d, bs, cs, hs, p_kind, p_attribute, '$1', '$2', p_limit), p_value, coalesce(after, ''))
$function$;
