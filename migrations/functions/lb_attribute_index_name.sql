-- lb_attribute_index_name: the trigger of attribute_indexes that names a
-- recorded index inserted without a name (lorebase_app may not insert one;
-- migrations/0024): lb_index_name of its Domain, branch, Kind and
-- Attribute.
CREATE OR REPLACE FUNCTION lb_attribute_index_name()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    NEW.name := lb_index_name(NEW.domain_id, NEW.branch_id, NEW.kind, NEW.attribute);
    RETURN NEW;
END
$function$;
