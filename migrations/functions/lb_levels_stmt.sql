-- lb_levels_stmt: the statement text of a multi-level read (get, present,
-- links, neighborhood) over the parameters lv_domain int, lv_branches
-- int[], lv_cuts bigint[] (lb_level_cuts), lv_key text, lv_dir text
-- (out, in or both), lv_rel text ('' for every Relation), lv_depth,
-- lv_limit and lv_fanout int. The statements are written once, as static
-- SQL in lb_get, lb_links and lb_neighborhood between the comments
-- /* levels:NAME */ and /* end levels */; this reads them from there.
CREATE OR REPLACE FUNCTION lb_levels_stmt(p_name text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
SELECT btrim(substring(p.prosrc FROM '/\* levels:' || p_name || ' \*/(.*?)/\* end levels \*/'), E' \n')
  FROM pg_proc p
 WHERE p.pronamespace = 'public'::regnamespace
   AND p.proname = CASE p_name WHEN 'get' THEN 'lb_get' WHEN 'present' THEN 'lb_links'
                               WHEN 'links' THEN 'lb_links' WHEN 'neighborhood' THEN 'lb_neighborhood' END
$function$;
