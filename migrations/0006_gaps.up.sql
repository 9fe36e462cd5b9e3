-- Revision numbers a client sees are per Domain. revisions.seq stays the
-- internal order (one counter for every Domain, so its values show the
-- volume of all Domains); revisions.number counts the Domain's own
-- Revisions: 1, 2, 3... drawn from the Domain's own sequence
-- revision_number_<domain id> (lb_next_revision_number), so a number never
-- depends on another Domain's writes. A commit that rolls back leaves a gap
-- in its own Domain's numbers only.
ALTER TABLE revisions ADD COLUMN number bigint;

UPDATE revisions r SET number = n.number
  FROM (SELECT domain_id, id, row_number() OVER (PARTITION BY domain_id ORDER BY seq) AS number
          FROM revisions) n
 WHERE r.domain_id = n.domain_id AND r.id = n.id;

ALTER TABLE revisions ALTER COLUMN number SET NOT NULL;
ALTER TABLE revisions ADD CONSTRAINT revisions_domain_number_key UNIQUE (domain_id, number);

DO $$
DECLARE
    d record;
BEGIN
    FOR d IN SELECT x.id, (SELECT max(r.number) FROM revisions r WHERE r.domain_id = x.id) AS last
               FROM domains x LOOP
        EXECUTE format('CREATE SEQUENCE IF NOT EXISTS %I AS bigint MINVALUE 1', 'revision_number_' || d.id);
        IF d.last IS NOT NULL THEN
            PERFORM setval(format('%I', 'revision_number_' || d.id)::regclass, d.last, true);
        END IF;
    END LOOP;
END
$$;
