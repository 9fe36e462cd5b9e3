-- lb_changed_sql: the keys of Records branch b changed after seq c (from
-- its Revisions), greater than after, in key order.
CREATE OR REPLACE FUNCTION lb_changed_sql(d integer, b integer, c bigint, after text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT DISTINCT (ch ->> 'key') COLLATE "C" AS key
  FROM revisions v CROSS JOIN LATERAL jsonb_array_elements(v.changes) ch
 WHERE v.domain_id = %1$L AND v.branch_id = %2$L AND v.seq > %3$L AND ch ->> 'op' IN ('put', 'patch', 'delete')
   AND (ch ->> 'key') COLLATE "C" > %4$L$q$, d, b, c, coalesce(after, ''))
$function$;
