-- lb_search_records: the number of present Records of branch b by its
-- counters (mat_counts), NULL when the branch keeps none.
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_records(d integer, b integer)
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
#variable_conflict use_column
BEGIN
    RETURN (
        SELECT sum(m.records)::bigint FROM refs r JOIN mat_counts m ON m.domain_id = r.domain_id AND m.branch_id = r.id
         WHERE r.domain_id = d AND r.id = b AND r.counts_from IS NOT NULL);
END
$function$;
