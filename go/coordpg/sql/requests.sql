-- Resolving an ambiguous commit, and housekeeping (go/coordpg). Reads, not decisions.

-- name: request_get
-- $1 request id: what the winning statement with this id decided (no row: it did not win)
SELECT v FROM wkcoord_request WHERE op = $1;

-- name: request_prune
-- $1 seconds: forgets the requests older than that (no retry can still be asking)
WITH d AS (DELETE FROM wkcoord_request WHERE at < now() - make_interval(secs => $1) RETURNING 1)
SELECT count(*) FROM d;

-- name: session_end
-- $1 pid, $2 application_name: ends the session that sent an ambiguous statement, if it still
-- runs, so that its transaction is over (committed or rolled back) before the read-back
SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND application_name = $2;

-- name: session_alive
SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND application_name = $2);

-- name: db_now
-- The database clock in milliseconds since 1970 (Store.Now)
SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
