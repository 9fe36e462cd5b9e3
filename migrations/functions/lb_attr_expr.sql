-- lb_attr_expr: the expression a read of Attribute p_attr of Kind p_kind
-- on the levels bs compares, on the rows of alias: (alias.ivals ->> attr)
-- when the Attribute's per-Attribute index of every level is ready (built
-- on that expression, every Record of the Kind holding the value in
-- ivals: attribute_indexes.ready), so the planner matches the indexes;
-- (alias."values" ->> attr) otherwise, which is always correct. Under
-- row-level security a level of another Domain has no ready index.
CREATE OR REPLACE FUNCTION lb_attr_expr(d integer, bs integer[], p_kind text, p_attr text, alias text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
SELECT CASE WHEN (SELECT count(*) FROM attribute_indexes a
                   WHERE a.domain_id = d AND a.branch_id = ANY (bs) AND a.kind = p_kind AND a.attribute = p_attr AND a.ready)
                 = cardinality(bs)
            THEN format('(%I.ivals ->> %L)', alias, p_attr)
            ELSE format('(%I."values" ->> %L)', alias, p_attr) END
$function$;
