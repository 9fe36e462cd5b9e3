-- lb_search_records: the number of present Records of branch b by its
-- counters (mat_counts), NULL when the branch keeps none.
CREATE OR REPLACE FUNCTION lb_search_records(d integer, b integer)
 RETURNS bigint
 LANGUAGE sql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
SELECT sum(m.records)::bigint FROM refs r JOIN mat_counts m ON m.domain_id = r.domain_id AND m.branch_id = r.id
 WHERE r.domain_id = d AND r.id = b AND r.counts_from IS NOT NULL
$function$;
