-- The ledger's statements (go/coordpg, docs/COORD.md "Across replicas"). Each decision is one
-- statement; a winning one inserts its request id into wkcoord_request in the same statement.
-- A loser learns what won from the statement's own snapshot (cur); only when that snapshot still
-- shows the transition open (a concurrent winner committed after the statement began) does the
-- driver read the row once more. Values are u64 XOR 2^63 (0001_init.sql); enc(0) is
-- (-9223372036854775807 - 1).

-- name: ledger_insert
-- $1 ledger, $2 key, $3 id, $4 runner, $5 deadline (NULL: never), $6 now, $7 request id
WITH d AS (
  INSERT INTO wkcoord_record (ledger, key, state, id, runner, deadline, refreshed_at)
  VALUES ($1, $2, 1, $3, $4, $5, $6)
  ON CONFLICT (ledger, key) DO NOTHING
  RETURNING 1
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $7, '{}' FROM d
), cur AS (
  SELECT state, outcome FROM wkcoord_record WHERE ledger = $1 AND key = $2
)
SELECT EXISTS (SELECT 1 FROM d), (SELECT state FROM cur), (SELECT outcome FROM cur);

-- name: ledger_place
-- $1 ledger, $2 keys (distinct), $3 id, $4 runner, $5 deadline, $6 now, $7 request id
-- One statement for the whole batch; v lists the ordinals (from 1) of the keys it placed.
WITH k AS (
  SELECT key, i FROM unnest($2::bytea[]) WITH ORDINALITY AS k(key, i)
), d AS (
  INSERT INTO wkcoord_record (ledger, key, state, id, runner, deadline, refreshed_at)
  SELECT $1, key, 1, $3, $4, $5, $6 FROM k ORDER BY i
  ON CONFLICT (ledger, key) DO NOTHING
  RETURNING key
), w AS (
  INSERT INTO wkcoord_request (op, v)
  SELECT $7, array_agg(k.i ORDER BY k.i) FROM d JOIN k ON k.key = d.key HAVING count(*) > 0
), cur AS (
  SELECT r.key, r.state, r.outcome FROM wkcoord_record r
  WHERE r.ledger = $1 AND r.key IN (SELECT key FROM k)
)
SELECT k.i, d.key IS NOT NULL, cur.state, cur.outcome
FROM k LEFT JOIN d ON d.key = k.key LEFT JOIN cur ON cur.key = k.key
ORDER BY k.i;

-- name: ledger_claim
-- $1 ledger, $2 key, $3 placeholder, $4 request id (the claim's), $5 runner, $6 now, $7 request id
WITH cur AS (
  SELECT state, id, outcome FROM wkcoord_record WHERE ledger = $1 AND key = $2
), d AS (
  UPDATE wkcoord_record SET state = 2, id = $4, runner = $5, refreshed_at = $6
  WHERE ledger = $1 AND key = $2 AND state = 1 AND id = $3
  RETURNING 1
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $7, '{}' FROM d
)
SELECT EXISTS (SELECT 1 FROM d), (SELECT state FROM cur), (SELECT id FROM cur), (SELECT outcome FROM cur);

-- name: ledger_finalize
-- $1 ledger, $2 key, $3 outcome, $4 payload, $5 now, $6 request id
-- Pending-only: the condition is in the SET (state < 3), so that the duplicate's audit fields
-- (duplicates, dup_payload) are written by the same statement under the same row lock; the
-- winner is the statement that set fin_op. A retried duplicate (same request id) counts once.
WITH d AS (
  UPDATE wkcoord_record SET
    outcome      = CASE WHEN state < 3 THEN $3 ELSE outcome END,
    payload      = CASE WHEN state < 3 THEN $4 ELSE payload END,
    finalized_at = CASE WHEN state < 3 THEN $5 ELSE finalized_at END,
    fin_op       = CASE WHEN state < 3 THEN $6 ELSE fin_op END,
    duplicates   = CASE WHEN state < 3 OR dup_op IS NOT DISTINCT FROM $6 THEN duplicates ELSE duplicates + 1 END,
    dup_payload  = CASE WHEN state < 3 THEN dup_payload ELSE $4 END,
    dup_op       = CASE WHEN state < 3 THEN dup_op ELSE $6 END,
    state        = 3
  WHERE ledger = $1 AND key = $2
  RETURNING fin_op = $6 AS won, outcome
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $6, '{}' FROM d WHERE d.won
)
SELECT won, outcome FROM d;

-- name: ledger_finalize_batch
-- $1 ledger, $2 keys (distinct), $3 payloads, $4 outcome, $5 now, $6 request id
-- v lists the ordinals (from 1) of the keys it finalized.
WITH k AS (
  SELECT key, payload, i FROM unnest($2::bytea[], $3::bigint[]) WITH ORDINALITY AS k(key, payload, i)
), d AS (
  UPDATE wkcoord_record r SET
    outcome      = CASE WHEN r.state < 3 THEN $4 ELSE r.outcome END,
    payload      = CASE WHEN r.state < 3 THEN k.payload ELSE r.payload END,
    finalized_at = CASE WHEN r.state < 3 THEN $5 ELSE r.finalized_at END,
    fin_op       = CASE WHEN r.state < 3 THEN $6 ELSE r.fin_op END,
    duplicates   = CASE WHEN r.state < 3 OR r.dup_op IS NOT DISTINCT FROM $6 THEN r.duplicates ELSE r.duplicates + 1 END,
    dup_payload  = CASE WHEN r.state < 3 THEN r.dup_payload ELSE k.payload END,
    dup_op       = CASE WHEN r.state < 3 THEN r.dup_op ELSE $6 END,
    state        = 3
  FROM k
  WHERE r.ledger = $1 AND r.key = k.key
  RETURNING k.i, r.fin_op = $6 AS won, r.outcome
), w AS (
  INSERT INTO wkcoord_request (op, v)
  SELECT $6, array_agg(i ORDER BY i) FROM d WHERE won HAVING count(*) > 0
)
SELECT k.i, d.won, d.outcome FROM k LEFT JOIN d ON d.i = k.i ORDER BY k.i;

-- name: ledger_take
-- $1 ledger, $2 key, $3 expected id, $4 request id
-- Compare-and-delete: the record goes only while PENDING and holding the expected id.
WITH cur AS (
  SELECT state, id, outcome FROM wkcoord_record WHERE ledger = $1 AND key = $2
), d AS (
  DELETE FROM wkcoord_record WHERE ledger = $1 AND key = $2 AND state < 3 AND id = $3
  RETURNING 1
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $4, '{}' FROM d
)
SELECT EXISTS (SELECT 1 FROM d), (SELECT state FROM cur), (SELECT id FROM cur), (SELECT outcome FROM cur);

-- name: ledger_touch
-- $1 ledger, $2 key, $3 runner, $4 now (idempotent: no request id)
WITH cur AS (
  SELECT state, runner, outcome FROM wkcoord_record WHERE ledger = $1 AND key = $2
), d AS (
  UPDATE wkcoord_record SET refreshed_at = GREATEST(refreshed_at, $4)
  WHERE ledger = $1 AND key = $2 AND state < 3 AND runner = $3
  RETURNING state
)
-- The state: the refreshed row's (a won heartbeat reports the PENDING state it refreshed), else
-- the snapshot's.
SELECT EXISTS (SELECT 1 FROM d), COALESCE((SELECT state FROM d), (SELECT state FROM cur)),
  (SELECT runner FROM cur), (SELECT outcome FROM cur);

-- name: ledger_reconcile
-- $1 ledger, $2 now, $3 limit, $4 request id: times out up to $3 PENDING records past their
-- deadline, through the pending-only condition (re-checked on each row it updates).
WITH c AS (
  SELECT key FROM wkcoord_record
  WHERE ledger = $1 AND state < 3 AND deadline <= $2
  ORDER BY deadline, key LIMIT $3
), d AS (
  UPDATE wkcoord_record r SET state = 3, outcome = 3, payload = (-9223372036854775807 - 1),
    finalized_at = $2, fin_op = $4
  FROM c WHERE r.ledger = $1 AND r.key = c.key AND r.state < 3 AND r.deadline <= $2
  RETURNING 1
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $4, ARRAY[count(*)] FROM d HAVING count(*) > 0
)
SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM d);

-- name: ledger_reclaim
-- $1 ledger, $2 cutoff (finalized at or before it; NULL: none), $3 limit, $4 request id
WITH c AS (
  SELECT key FROM wkcoord_record
  WHERE ledger = $1 AND state = 3 AND finalized_at <= $2
  ORDER BY finalized_at, key LIMIT $3
), d AS (
  DELETE FROM wkcoord_record r USING c
  WHERE r.ledger = $1 AND r.key = c.key AND r.state = 3 AND r.finalized_at <= $2
  RETURNING 1
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $4, ARRAY[count(*)] FROM d HAVING count(*) > 0
)
SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM d);

-- name: ledger_finalize_own
-- $1 ledger, $2 runner, $3 outcome, $4 now, $5 limit, $6 request id
WITH c AS (
  SELECT key FROM wkcoord_record
  WHERE ledger = $1 AND state < 3 AND runner = $2
  ORDER BY refreshed_at, key LIMIT $5
), d AS (
  UPDATE wkcoord_record r SET state = 3, outcome = $3, payload = (-9223372036854775807 - 1),
    finalized_at = $4, fin_op = $6
  FROM c WHERE r.ledger = $1 AND r.key = c.key AND r.state < 3 AND r.runner = $2
  RETURNING 1
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $6, ARRAY[count(*)] FROM d HAVING count(*) > 0
)
SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM d);

-- name: ledger_sweep_orphans
-- $1 ledger, $2 cutoff (refreshed at or before it; NULL: none), $3 now, $4 limit, $5 request id
-- Records with a runner (runner <> enc(0)) whose last heartbeat is past the quiet period.
WITH c AS (
  SELECT key FROM wkcoord_record
  WHERE ledger = $1 AND state < 3 AND runner <> (-9223372036854775807 - 1) AND refreshed_at <= $2
  ORDER BY refreshed_at, key LIMIT $4
), d AS (
  UPDATE wkcoord_record r SET state = 3, outcome = 4, payload = (-9223372036854775807 - 1),
    finalized_at = $3, fin_op = $5
  FROM c WHERE r.ledger = $1 AND r.key = c.key AND r.state < 3
    AND r.runner <> (-9223372036854775807 - 1) AND r.refreshed_at <= $2
  RETURNING 1
), w AS (
  INSERT INTO wkcoord_request (op, v) SELECT $5, ARRAY[count(*)] FROM d HAVING count(*) > 0
)
SELECT (SELECT count(*) FROM c), (SELECT count(*) FROM d);

-- name: ledger_get
-- $1 ledger, $2 key (a read, not a decision)
SELECT state, outcome, id, runner, deadline, refreshed_at, finalized_at, payload, duplicates, dup_payload
FROM wkcoord_record WHERE ledger = $1 AND key = $2;

-- name: ledger_states
-- $1 ledger, $2 keys: the state and outcome of each key that has a record (a read)
SELECT key, state, outcome FROM wkcoord_record WHERE ledger = $1 AND key = ANY ($2::bytea[]);

-- name: ledger_len
SELECT count(*) FROM wkcoord_record WHERE ledger = $1;
