-- lb_levels_sql: lb_levels_stmt with the parameters inlined as literals.
-- The statement is cut at its lv_* names in one pass and each name is
-- replaced by its value quoted with format('%L'), so no inserted value is
-- ever read again as a name.
CREATE OR REPLACE FUNCTION lb_levels_sql(p_name text, d integer, bs integer[], cuts bigint[], p_key text, p_dir text DEFAULT 'both'::text, p_rel text DEFAULT ''::text, p_depth integer DEFAULT 1, p_limit integer DEFAULT 1, p_fanout integer DEFAULT 1)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
WITH s(stmt) AS (SELECT lb_levels_stmt(p_name)),
     v(name, lit) AS (VALUES
        ('lv_domain', format('%L::int', d)),
        ('lv_branches', format('%L::int[]', bs)),
        ('lv_cuts', format('%L::bigint[]', cuts)),
        ('lv_key', format('%L::text', p_key)),
        ('lv_dir', format('%L::text', p_dir)),
        ('lv_rel', format('%L::text', coalesce(p_rel, ''))),
        ('lv_depth', format('%L::int', p_depth)),
        ('lv_limit', format('%L::int', p_limit)),
        ('lv_fanout', format('%L::int', p_fanout)))
SELECT string_agg(p.part || coalesce(v.lit, p.name, ''), '' ORDER BY p.i)
  FROM s
 CROSS JOIN LATERAL unnest(regexp_split_to_array(s.stmt, '\mlv_[a-z]+\M'),
                           ARRAY(SELECT m.t[1] FROM regexp_matches(s.stmt, '\m(lv_[a-z]+)\M', 'g') WITH ORDINALITY m(t, i)
                                  ORDER BY m.i)) WITH ORDINALITY p(part, name, i)
  LEFT JOIN v ON v.name = p.name
$function$;
