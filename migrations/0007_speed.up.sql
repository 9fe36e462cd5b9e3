-- A Revision's change list is one jsonb value of about 90 bytes per change
-- (880 kB for a commit of 10,000 changes), compressed when it is stored.
-- lz4 compresses it several times faster than the default pglz; rows
-- written before keep pglz (both are read alike).
ALTER TABLE revisions ALTER COLUMN changes SET COMPRESSION lz4;
