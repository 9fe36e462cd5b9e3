-- lb_levels resolves the levels of branch b as of seq s: branch ids, cuts
-- and the head_seq of each level's branch. p_through follows every base
-- (at= reads and the Revision log: a ready copy's past is its base's);
-- otherwise only overlays and copies still copying read through.
-- SECURITY INVOKER: the commit-side helpers call it as lorebase_app.
CREATE OR REPLACE FUNCTION lb_levels(d integer, b integer, s bigint, p_through boolean, OUT bs integer[], OUT cs bigint[], OUT hs bigint[])
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    r record;
    cur int := b;
    cut bigint := s;
BEGIN
    bs := '{}';
    cs := '{}';
    hs := '{}';
    LOOP
        SELECT x.id, x.mode, x.state, x.base_id, x.fork_seq, x.head_seq INTO r
          FROM refs x WHERE x.domain_id = d AND x.id = cur;
        EXIT WHEN NOT FOUND;
        bs := bs || r.id;
        cs := cs || cut;
        hs := hs || r.head_seq;
        EXIT WHEN r.base_id IS NULL OR cardinality(bs) >= 64
             OR NOT (r.mode = 'overlay' OR r.state = 'copying' OR p_through);
        cut := least(cut, coalesce(r.fork_seq, 0));
        cur := r.base_id;
    END LOOP;
END
$function$;
