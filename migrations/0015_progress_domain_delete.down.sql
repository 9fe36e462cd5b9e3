ALTER TABLE domains DROP COLUMN IF EXISTS state;

-- Earlier versions keep one re-embedding entry per branch: the most
-- recently started Kind's (by its Kind name when none says).
UPDATE refs r
   SET progress = jsonb_set(r.progress, '{embedding}',
                            (SELECT e.value FROM jsonb_each(r.progress -> 'embedding') e
                              ORDER BY e.value ->> 'state' = 'running' DESC, e.key LIMIT 1))
 WHERE jsonb_typeof(r.progress -> 'embedding') = 'object'
   AND jsonb_typeof(r.progress -> 'embedding' -> 'spec') IS DISTINCT FROM 'string'
   AND r.progress -> 'embedding' <> '{}';
