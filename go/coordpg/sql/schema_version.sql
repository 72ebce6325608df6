-- The migration lock, then the schema's version row. Every migration run takes the lock first,
-- inside its transaction (it is released at commit or rollback), so N replicas starting at once
-- migrate one after the other: the first creates and fills the schema, every later one finds the
-- version current and changes nothing. Without it, two runs creating the version table at the
-- same moment can fail in the catalog (a duplicate type or a unique violation). The key is the
-- bytes "wkcoord!" as a big-endian bigint; advisory locks are per database.
SELECT pg_advisory_xact_lock(8605080843283751969);
CREATE TABLE IF NOT EXISTS wkcoord_schema (
  id      integer PRIMARY KEY CHECK (id = 1),
  version integer NOT NULL
);
