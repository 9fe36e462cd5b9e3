-- lb_merge_links: which of the Links (p_from[i], p_rel[i], p_to[i]) are
-- present on branch p_branch at its head (p_at NULL) or as of seq p_at.
CREATE OR REPLACE FUNCTION lb_merge_links(p_branch integer, p_at bigint, p_from text[], p_rel text[], p_to text[])
 RETURNS TABLE(from_key text, relation text, to_key text)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    d int := lb_domain();
    h bigint;
    bs int[];
    cs bigint[];
    hs bigint[];
BEGIN
    IF d IS NULL THEN
        RAISE EXCEPTION 'no Domain in scope' USING ERRCODE = '42501';
    END IF;
    SELECT r.head_seq INTO h FROM refs r WHERE r.domain_id = d AND r.id = p_branch;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'branch not found' USING ERRCODE = 'P0002';
    END IF;
    SELECT * INTO bs, cs, hs FROM lb_levels(d, p_branch, coalesce(p_at, h), p_at IS NOT NULL);
    RETURN QUERY EXECUTE format($q$SELECT z.from_key::text, z.relation::text, z.to_key::text
  FROM (SELECT DISTINCT u.f COLLATE "C" AS from_key, u.r COLLATE "C" AS relation, u.t COLLATE "C" AS to_key
          FROM unnest($1::text[], $2::text[], $3::text[]) u(f, r, t)) q
 CROSS JOIN LATERAL %1$s z
 WHERE z.present$q$, lb_link_eff_sql(d, bs, cs, hs, 'q.from_key', 'q.relation', 'q.to_key')) USING p_from, p_rel, p_to;
END
$function$;
