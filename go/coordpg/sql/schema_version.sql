-- The schema's version row, created (if absent) and locked by every migration run before it
-- reads the version: N replicas starting at once apply a migration one after the other, and
-- every one after the first finds the version current and changes nothing.
CREATE TABLE IF NOT EXISTS wkcoord_schema (
  id      integer PRIMARY KEY CHECK (id = 1),
  version integer NOT NULL
);
