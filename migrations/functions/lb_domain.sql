-- lb_domain is the Domain of the current transaction, or NULL when none is
-- set. It is inlined by the planner, so policies using it stay index
-- conditions.
CREATE OR REPLACE FUNCTION lb_domain()
 RETURNS integer
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$ SELECT NULLIF(current_setting('lorebase.domain_id', true), '')::int $function$;
