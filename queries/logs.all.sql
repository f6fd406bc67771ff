-- logs.all
-- Parameters: @project (project ref), @start (exclusive lower bound, µs, or NULL), @end
--             (inclusive upper bound, µs, or NULL), @now (the clock, µs). The registry entry's
--             rules (queries/registry.ts) bind the rest: @retention_us, the retention of the
--             requested @project_tier (any tier the entry does not list is its fallback tier),
--             and @rows, the row cut.
-- Columns:    timestamp (µs), record (the full record as JSON text, metadata in the query shape),
--             which the registry spreads into id, timestamp, event_message, metadata.
-- Rules:      edge request logs of the project strictly newer than now - retention, within
--             (start, end], newest first, ties by id ascending, cut to @rows rows. The other
--             eight sources contribute no rows.
WITH scope AS (
  SELECT (SELECT id FROM projects WHERE ref = @project) AS project,
         -- One range (lower, upper] on the index: the later of the cutoff and the start, and the end.
         max(CAST(@now AS INTEGER) - CAST(@retention_us AS INTEGER),
             coalesce(CAST(@start AS INTEGER), -9223372036854775808)) AS lower,
         coalesce(CAST(@end AS INTEGER), 9223372036854775807) AS upper
),
-- The @rows-th newest instant in range: everything at or after it is a candidate, so ties at
-- the cut are decided by id.
edge AS (
  SELECT min(ts) AS ts FROM (
    SELECT ts FROM edge_logs
    WHERE project = (SELECT project FROM scope)
      AND ts > (SELECT lower FROM scope) AND ts <= (SELECT upper FROM scope)
    ORDER BY ts DESC LIMIT CAST(@rows AS INTEGER))
),
candidates AS (
  SELECT ts, log_record('edge_logs', rid, @project) AS record
  FROM edge_logs
  WHERE project = (SELECT project FROM scope)
    AND ts >= (SELECT ts FROM edge) AND ts <= (SELECT upper FROM scope)
)
SELECT ts AS timestamp, record
FROM candidates
ORDER BY ts DESC, record ->> '$.id' ASC
LIMIT CAST(@rows AS INTEGER)
