-- lb_merge_changed: what the Revisions of branch p_branch after seq p_lo
-- (up to p_hi, or all when NULL) changed: Records ('r', key), stored Links
-- ('l', from, relation, to) and the schema ('s'). Read through the log
-- index of the branch: its cost grows with the changes, not the Domain.
CREATE OR REPLACE FUNCTION lb_merge_changed(p_branch integer, p_lo bigint, p_hi bigint)
 RETURNS TABLE(what text, key text, relation text, to_key text)
 LANGUAGE sql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
SELECT DISTINCT
       CASE WHEN ch ->> 'op' IN ('link', 'unlink') THEN 'l' WHEN ch ->> 'op' = 'schema' THEN 's' ELSE 'r' END,
       coalesce(ch ->> 'key', ch ->> 'from', ''), coalesce(ch ->> 'relation', ''), coalesce(ch ->> 'to', '')
  FROM revisions v CROSS JOIN LATERAL jsonb_array_elements(v.changes) ch
 WHERE v.domain_id = lb_domain() AND v.branch_id = p_branch AND v.seq > p_lo
   AND (p_hi IS NULL OR v.seq <= p_hi)
$function$;
