DROP TABLE IF EXISTS mat_vectors;
-- The vector extension stays: other databases objects may use it.
