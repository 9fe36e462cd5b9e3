-- lb_index_name: the name of the per-Attribute index of a Kind's Attribute
-- on a branch, as jobs.IndexName computes it: "mat_records_attr_" and the
-- first 12 bytes, in hex, of the sha256 of "domain:branch:kind:attribute".
CREATE OR REPLACE FUNCTION lb_index_name(domain_id integer, branch_id integer, kind text, attribute text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$
SELECT 'mat_records_attr_' || encode(substring(sha256(convert_to(
           domain_id::text || ':' || branch_id::text || ':' || kind || ':' || attribute, 'UTF8')) FROM 1 FOR 12), 'hex')
$function$;
