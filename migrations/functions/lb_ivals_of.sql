-- lb_ivals_of: the ivals of a Record of Kind p_kind with p_values for the
-- per-Attribute indexes recorded (attribute_indexes, any state) on any of
-- the branches bs of Domain d: its values of those Attributes, those it
-- has; NULL when it has none. lb_ivals calls it for one branch; a branch
-- copy computes the same for the copy and the level it reads, with the
-- recorded Attributes read once a batch (jobs/materialize.go).
CREATE OR REPLACE FUNCTION lb_ivals_of(d integer, bs integer[], p_kind text, p_values jsonb)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
SELECT jsonb_object_agg(a.attribute, p_values -> a.attribute::text)
  FROM (SELECT DISTINCT x.attribute FROM attribute_indexes x
         WHERE x.domain_id = d AND x.branch_id = ANY (bs) AND x.kind = p_kind AND p_values ? x.attribute::text) a
$function$;
