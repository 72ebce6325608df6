-- Migration 1: the coordination tables. Idempotent (IF NOT EXISTS throughout).
--
-- Every u64 of the contract (ids, runners, times, payloads, anchor values, counter values) is
-- stored as a bigint in the order-preserving encoding `u64 XOR 2^63` (so 0 is -2^63 and 2^64-1 is
-- 2^63-1): comparisons in SQL order them as the u64s they are. The drivers encode and decode;
-- every threshold (a cutoff "now - retention") is computed by the driver, so SQL only compares.
-- NULL is "unset": an anchor never fired, a deadline that never comes, a record not finalized.

-- Records of every ledger and hand-off ledger: one row per key; state 1 PENDING (placed),
-- 2 PENDING (claimed), 3 terminal (the outcome says which). A hand-off's key is its 6-tuple,
-- encoded in full (no hash), so two tuples are two rows.
CREATE TABLE IF NOT EXISTS wkcoord_record (
  ledger       text     NOT NULL,
  key          bytea    NOT NULL,
  state        smallint NOT NULL,
  outcome      integer  NOT NULL DEFAULT 0,
  id           bigint   NOT NULL,
  runner       bigint   NOT NULL,
  deadline     bigint,
  refreshed_at bigint   NOT NULL,
  finalized_at bigint,
  payload      bigint   NOT NULL DEFAULT (-9223372036854775807 - 1),
  duplicates   bigint   NOT NULL DEFAULT 0,
  dup_payload  bigint   NOT NULL DEFAULT (-9223372036854775807 - 1),
  dup_op       bigint,
  fin_op       bigint,
  PRIMARY KEY (ledger, key)
);
CREATE INDEX IF NOT EXISTS wkcoord_record_due ON wkcoord_record (ledger, deadline) WHERE state < 3;
CREATE INDEX IF NOT EXISTS wkcoord_record_final ON wkcoord_record (ledger, finalized_at) WHERE state = 3;
CREATE INDEX IF NOT EXISTS wkcoord_record_runner ON wkcoord_record (ledger, runner, refreshed_at) WHERE state < 3;

-- Anchors by (table, id); value NULL while unset. prev is the value the last firing advanced
-- from (what TryFire returns).
CREATE TABLE IF NOT EXISTS wkcoord_anchor (
  scope text   NOT NULL,
  id    bigint NOT NULL,
  value bigint,
  prev  bigint,
  PRIMARY KEY (scope, id)
);

-- The words, one row per (store, key): a flip (a = state), a counter (a = value), an exclusive
-- trigger (a = run number, b = 1 while active), a windowed counter (a = window end, b = count).
-- A key without a row is the word's initial state.
CREATE TABLE IF NOT EXISTS wkcoord_word (
  scope text   NOT NULL,
  key   bytea  NOT NULL,
  a     bigint NOT NULL,
  b     bigint NOT NULL,
  PRIMARY KEY (scope, key)
);

-- The requests that won: each winning decision statement inserts its request id here in the
-- same statement, with what it decided (v). An ambiguous commit is resolved by reading it.
-- Pruned by the host (Store.PruneRequests) once no retry can still be asking.
CREATE TABLE IF NOT EXISTS wkcoord_request (
  op bigint      PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  v  bigint[]    NOT NULL
);
CREATE INDEX IF NOT EXISTS wkcoord_request_at ON wkcoord_request (at);
