-- lb_ivals: the ivals of a Record of Kind p_kind with p_values on branch b
-- of Domain d: its values of the Attributes whose per-Attribute index the
-- branch records (attribute_indexes, any state), those it has; NULL when
-- it has none. What the commit writes (commit.indexedValues).
CREATE OR REPLACE FUNCTION lb_ivals(d integer, b integer, p_kind text, p_values jsonb)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
SELECT lb_ivals_of(d, ARRAY[b], p_kind, p_values)
$function$;
