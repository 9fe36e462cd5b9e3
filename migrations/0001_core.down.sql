DROP TABLE IF EXISTS mat_link_history, mat_history, mat_links, mat_records, idempotency_keys,
    objects, revisions, schemas, refs, tokens, domains CASCADE;
DROP SEQUENCE IF EXISTS revision_seq;
DROP FUNCTION IF EXISTS lb_domain();
