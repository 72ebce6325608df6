-- The anchor statements (go/coordpg). Values are u64 XOR 2^63; NULL is the unset anchor.

-- name: anchor_insert
-- $1 table, $2 id, $3 value (NULL: unset), $4 request id
WITH d AS (
  INSERT INTO wkcoord_anchor (scope, id, value) VALUES ($1, $2, $3)
  ON CONFLICT (scope, id) DO NOTHING
  RETURNING 1
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $4, '{}' FROM d
)
SELECT EXISTS (SELECT 1 FROM d);

-- name: anchor_remove
-- $1 table, $2 id, $3 request id
WITH d AS (
  DELETE FROM wkcoord_anchor WHERE scope = $1 AND id = $2 RETURNING 1
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $3, '{}' FROM d
)
SELECT EXISTS (SELECT 1 FROM d);

-- name: anchor_try_fire
-- $1 table, $2 id, $3 now, $4 cutoff (due when value <= cutoff; NULL: nothing is due), $5 request id
-- The whole decision in one statement: an unset anchor is anchored at now without firing
-- (first seen: prev stays NULL); a due one advances from its value to now (prev: that value).
-- The UPDATE re-checks its WHERE on the row's latest version, so of two replicas one advances.
WITH cur AS (
  SELECT value FROM wkcoord_anchor WHERE scope = $1 AND id = $2
), d AS (
  UPDATE wkcoord_anchor SET prev = value, value = $3
  WHERE scope = $1 AND id = $2 AND (value IS NULL OR value <= $4)
  RETURNING prev
), w AS (
  INSERT INTO wkcoord_request (op, v)
  SELECT $5, CASE WHEN prev IS NULL THEN '{}'::bigint[] ELSE ARRAY[prev] END FROM d
)
SELECT EXISTS (SELECT 1 FROM cur), (SELECT value FROM cur), EXISTS (SELECT 1 FROM d), (SELECT prev FROM d);

-- name: anchor_advance
-- $1 table, $2 id, $3 expected (NULL: matches nothing), $4 next, $5 request id
WITH cur AS (
  SELECT 1 FROM wkcoord_anchor WHERE scope = $1 AND id = $2
), d AS (
  UPDATE wkcoord_anchor SET value = $4 WHERE scope = $1 AND id = $2 AND value = $3
  RETURNING 1
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $5, '{}' FROM d
)
SELECT EXISTS (SELECT 1 FROM cur), EXISTS (SELECT 1 FROM d);

-- name: anchor_unset
-- $1 table, $2 id, $3 now, $4 request id: the explicit unset -> now transition
WITH cur AS (
  SELECT 1 FROM wkcoord_anchor WHERE scope = $1 AND id = $2
), d AS (
  UPDATE wkcoord_anchor SET value = $3 WHERE scope = $1 AND id = $2 AND value IS NULL
  RETURNING 1
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $4, '{}' FROM d
)
SELECT EXISTS (SELECT 1 FROM cur), EXISTS (SELECT 1 FROM d);

-- name: anchor_get
SELECT value FROM wkcoord_anchor WHERE scope = $1 AND id = $2;

-- name: anchor_len
SELECT count(*) FROM wkcoord_anchor WHERE scope = $1;
