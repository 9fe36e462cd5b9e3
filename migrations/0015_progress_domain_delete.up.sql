-- A branch's re-embedding progress is kept per Kind:
-- refs.progress.embedding.<Kind> = {kind, spec, model, state, after,
-- embedded, total_estimate, batches, finished_at}, so re-embeddings of
-- several Kinds of one branch each keep their own cursor. The single entry
-- of earlier versions ({kind, spec, ...}) moves under its Kind.
UPDATE refs
   SET progress = jsonb_set(progress, '{embedding}',
                            jsonb_build_object(progress -> 'embedding' ->> 'kind', progress -> 'embedding'))
 WHERE jsonb_typeof(progress -> 'embedding' -> 'spec') = 'string'
   AND jsonb_typeof(progress -> 'embedding' -> 'kind') = 'string';

-- A Domain is deleted in the background: DELETE /v1/domains/{d} marks it
-- deleting (it is then invisible and its tokens revoked) and queues the
-- store.domain_delete job, which removes its rows from every table that
-- has a domain_id, its indexes and its Revision-number sequence, and then
-- the Domain itself.
ALTER TABLE domains ADD COLUMN IF NOT EXISTS state text NOT NULL DEFAULT 'ready'
    CONSTRAINT domains_state_check CHECK (state IN ('ready', 'deleting'));
