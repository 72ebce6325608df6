-- The word statements (go/coordpg): one row per (store, key) in wkcoord_word; a key without a
-- row is the word's initial state, so every decision is an INSERT ... ON CONFLICT that creates
-- the row or changes it. a is a u64 XOR 2^63; b is a plain small integer.

-- name: flip
-- $1 store, $2 key, $3 from, $4 to, $5 the initial state, $6 request id
-- A key without a row is in the initial state: it is inserted at $4 when $3 is the initial state
-- (a flip), else at the initial state (no flip). A row is flipped only while it holds $3.
WITH d AS (
  INSERT INTO wkcoord_word AS w (scope, key, a, b)
  VALUES ($1, $2, CASE WHEN $3::bigint = $5::bigint THEN $4::bigint ELSE $5::bigint END, 0)
  ON CONFLICT (scope, key) DO UPDATE SET a = $4::bigint WHERE w.a = $3::bigint
  RETURNING (xmax = 0) AS inserted
), won AS (
  SELECT 1 FROM d WHERE NOT d.inserted OR $3::bigint = $5::bigint
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $6, '{}' FROM won
)
SELECT EXISTS (SELECT 1 FROM won);

-- name: word_get
SELECT a, b FROM wkcoord_word WHERE scope = $1 AND key = $2;

-- name: counter_increment
-- $1 store, $2 key, $3 request id: a + 1 (wrapping at 2^64), never read-modify-write
WITH d AS (
  INSERT INTO wkcoord_word AS w (scope, key, a, b) VALUES ($1, $2, -9223372036854775807, 0)
  ON CONFLICT (scope, key) DO UPDATE
    SET a = CASE WHEN w.a = 9223372036854775807 THEN (-9223372036854775807 - 1) ELSE w.a + 1 END
  RETURNING a
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $3, ARRAY[a] FROM d
)
SELECT a FROM d;

-- name: trigger_start
-- $1 store, $2 key, $3 the last run number (RunMax, encoded), $4 request id
-- Inactive with run N -> active with run N + 1; a refused caller learns the active run from cur.
WITH cur AS (
  SELECT a, b FROM wkcoord_word WHERE scope = $1 AND key = $2
), d AS (
  INSERT INTO wkcoord_word AS w (scope, key, a, b) VALUES ($1, $2, -9223372036854775807, 1)
  ON CONFLICT (scope, key) DO UPDATE SET a = w.a + 1, b = 1
  WHERE w.b = 0 AND w.a < $3::bigint
  RETURNING a
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $4, ARRAY[a] FROM d
)
SELECT (SELECT a FROM d), (SELECT a FROM cur), (SELECT b FROM cur);

-- name: trigger_finish
-- $1 store, $2 key, $3 run (encoded), $4 request id: only the run that holds the key ends it
WITH d AS (
  UPDATE wkcoord_word SET b = 0 WHERE scope = $1 AND key = $2 AND a = $3 AND b = 1
  RETURNING 1
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $4, '{}' FROM d
)
SELECT EXISTS (SELECT 1 FROM d);

-- name: window_increment
-- $1 store, $2 key, $3 now, $4 now + window, $5 request id: a new window (count 1) when now is
-- at or past the end, else one more (saturating at 2^20 - 1)
WITH d AS (
  INSERT INTO wkcoord_word AS w (scope, key, a, b) VALUES ($1, $2, $4::bigint, 1)
  ON CONFLICT (scope, key) DO UPDATE SET
    a = CASE WHEN $3::bigint >= w.a THEN $4::bigint ELSE w.a END,
    b = CASE WHEN $3::bigint >= w.a THEN 1 ELSE LEAST(w.b + 1, 1048575) END
  RETURNING b
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $5, ARRAY[b] FROM d
)
SELECT b FROM d;
