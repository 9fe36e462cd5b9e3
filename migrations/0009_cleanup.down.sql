-- The functions 0009 dropped are not restored here: nothing called them,
-- and a release that still has their files in migrations/functions/
-- recreates them when it applies its function files (a function missing
-- from the database is applied again whatever checksum was recorded).
SELECT 1;
