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
