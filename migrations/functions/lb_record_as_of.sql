-- lb_record_as_of is the state of Record p_key on branch level b as of seq
-- p_cut, built from the level's history, for a level whose mat_records row
-- changed after the cut: no row when the Record is absent at the cut or the
-- level has no history of it up to the cut (the level has no say then).
--
-- kind, title and values are the newest history row's at or before the cut;
-- search is computed as the commit computes it, from the compiled schema
-- p_compiled (the Kind's title, weight A, and its other search Attributes,
-- weight B). created_seq, versions and lineage come from the current row
-- when nothing after the cut broke the Record's life (no delete), and are
-- otherwise counted from the level's history since the Record's last
-- creation at or before the cut (exact on a single-level chain; on an
-- overlay level, history before the overlay's first change of the Record
-- lives on the level below and is not consulted).
CREATE OR REPLACE FUNCTION lb_record_as_of(d integer, b integer, p_key text, p_cut bigint, p_compiled jsonb)
 RETURNS TABLE(key text, kind text, title text, "values" jsonb, search tsvector, lineage jsonb, created_seq bigint, seq bigint, versions integer)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    h record;
    r record;
    last_delete bigint;
    life_start bigint;
    n_after int;
    broken boolean;
    lin jsonb := '{}';
    a text;
    v jsonb;
    s bigint;
BEGIN
    SELECT x.seq, x.op, x.kind, x.title, x.values INTO h
      FROM mat_history x
     WHERE x.domain_id = d AND x.branch_id = b AND x.key = p_key AND x.seq <= p_cut
     ORDER BY x.seq DESC LIMIT 1;
    IF NOT FOUND OR h.op = 'delete' OR h.values IS NULL THEN
        RETURN;
    END IF;
    SELECT m.values, m.lineage, m.created_seq, m.seq, m.versions INTO r
      FROM mat_records m
     WHERE m.domain_id = d AND m.branch_id = b AND m.key = p_key;
    SELECT max(x.seq) INTO last_delete
      FROM mat_history x
     WHERE x.domain_id = d AND x.branch_id = b AND x.key = p_key AND x.seq <= p_cut AND x.op = 'delete';
    SELECT min(x.seq) INTO life_start
      FROM mat_history x
     WHERE x.domain_id = d AND x.branch_id = b AND x.key = p_key AND x.seq <= p_cut
       AND x.seq > coalesce(last_delete, 0);
    SELECT count(*), coalesce(bool_or(x.op = 'delete'), false) INTO n_after, broken
      FROM mat_history x
     WHERE x.domain_id = d AND x.branch_id = b AND x.key = p_key AND x.seq > p_cut;

    key := p_key;
    kind := h.kind;
    title := h.title;
    "values" := h.values;
    seq := h.seq;
    IF r.seq IS NOT NULL AND NOT broken AND r.created_seq <= p_cut THEN
        created_seq := r.created_seq;
        versions := greatest(r.versions - n_after, 1);
    ELSE
        created_seq := life_start;
        SELECT count(*)::int INTO versions
          FROM mat_history x
         WHERE x.domain_id = d AND x.branch_id = b AND x.key = p_key AND x.seq <= p_cut;
    END IF;

    FOR a, v IN SELECT e.key, e.value FROM jsonb_each(h.values) e LOOP
        IF r.seq IS NOT NULL AND NOT broken AND jsonb_typeof(r.lineage -> a) = 'number'
           AND (r.lineage ->> a)::numeric <= p_cut AND r.values -> a = v THEN
            lin := lin || jsonb_build_object(a, r.lineage -> a);
        ELSE
            -- The first change of the newest run of history rows (of this
            -- life, up to the cut) that hold the value.
            SELECT max(x.seq) INTO s
              FROM mat_history x
             WHERE x.domain_id = d AND x.branch_id = b AND x.key = p_key
               AND x.seq <= p_cut AND x.seq >= life_start
               AND (x.values -> a) IS DISTINCT FROM v;
            SELECT min(x.seq) INTO s
              FROM mat_history x
             WHERE x.domain_id = d AND x.branch_id = b AND x.key = p_key
               AND x.seq <= p_cut AND x.seq >= life_start AND x.seq > coalesce(s, 0);
            lin := lin || jsonb_build_object(a, s);
        END IF;
    END LOOP;
    lineage := lin;

    search := setweight(to_tsvector('simple', h.title), 'A') || setweight(to_tsvector('simple', coalesce((
        SELECT string_agg(h.values ->> (at ->> 'name'), ' ')
          FROM jsonb_array_elements(coalesce(p_compiled -> 'kinds' -> h.kind -> 'attributes', '[]')) at
         WHERE coalesce((at ->> 'search')::boolean, false)
           AND (at ->> 'name') IS DISTINCT FROM (p_compiled -> 'kinds' -> h.kind ->> 'title')), '')), 'B');
    RETURN NEXT;
END
$function$;
