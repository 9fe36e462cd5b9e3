-- lb_commit_records: the present Records of branch p_b of Domain p_d among
-- p_whole (with their values and lineage) and among p_ends (their Kind
-- alone), for a commit on a branch that owns all its rows. The keys are
-- read through a bitmap of the primary key, not an index scan: a bitmap
-- heap scan asks the kernel for the heap pages ahead of reading them
-- (effective_io_concurrency), so the random heap pages of a large commit
-- whose Records are not in shared buffers are read side by side instead of
-- one after the other (at 10M, 1,000 Records' heap pages not cached: 77 ms
-- of reads one by one, 8 ms prefetched). With the pages cached both plans
-- cost the same. Nor is the partition scanned whole: it holds every
-- branch of the Domain and other Domains' rows. The Domain and branch are
-- InitPlan values, unknown when the statement is planned: as constants, a
-- Domain the partition's statistics do not know (a new tenant beside a large
-- one) is estimated at a row, and the bitmap is taken over the branch's
-- whole range of mat_records_iseq_idx, filtering by key. The Domain's
-- partition is chosen when the statement runs.
CREATE OR REPLACE FUNCTION lb_commit_records(p_d integer, p_b integer, p_whole text[], p_ends text[])
 RETURNS TABLE(whole boolean, key text, kind text, "values" jsonb, lineage jsonb, created_seq bigint, versions integer)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_indexscan TO 'off'
 SET enable_seqscan TO 'off'
AS $function$
BEGIN
    RETURN QUERY EXECUTE format($q$SELECT true, m.key::text, m.kind::text, m."values", m.lineage, m.created_seq, m.versions
  FROM mat_records m
 WHERE m.domain_id = (SELECT %1$L::int) AND m.branch_id = (SELECT %2$L::int) AND NOT m.deleted AND m.key = ANY ($1)
UNION ALL
SELECT false, m.key::text, m.kind::text, NULL::jsonb, NULL::jsonb, m.created_seq, m.versions
  FROM mat_records m
 WHERE m.domain_id = (SELECT %1$L::int) AND m.branch_id = (SELECT %2$L::int) AND NOT m.deleted AND m.key = ANY ($2)$q$, p_d, p_b)
      USING p_whole, p_ends;
END
$function$;
