-- logs.all
-- Parameters: @project (project ref), @project_tier (FREE|PRO|PAYG|ENTERPRISE; anything else
--             is FREE), @start (exclusive lower bound, µs, or NULL), @end (inclusive upper
--             bound, µs, or NULL), @now (the clock, µs).
-- Columns:    id, timestamp (µs), event_message, metadata (JSON text in the query shape).
-- Rules:      edge request logs of the project strictly newer than now - retention (FREE 1 day,
--             PRO 7 days, PAYG/ENTERPRISE 90 days), within (start, end], newest first, ties by
--             id ascending, cut to 100 rows. The other eight sources contribute no rows.
WITH scope AS (
  SELECT CAST(@now AS INTEGER) - CASE @project_tier
           WHEN 'PRO' THEN 604800000000
           WHEN 'PAYG' THEN 7776000000000
           WHEN 'ENTERPRISE' THEN 7776000000000
           ELSE 86400000000 END AS cutoff,
         (SELECT id FROM projects WHERE ref = @project) AS project
),
matching AS (
  SELECT e.rid, e.ts, e.off, e.len
  FROM edge_logs e, scope w
  WHERE e.project = w.project AND e.ts > w.cutoff
    AND (@start IS NULL OR e.ts > CAST(@start AS INTEGER))
    AND (@end IS NULL OR e.ts <= CAST(@end AS INTEGER))
),
newest AS (
  SELECT ts FROM matching ORDER BY ts DESC LIMIT 100
),
-- Every row at or after the 100th newest instant, so ties at the cut are decided by id.
candidates AS (
  SELECT ts, log_record('edge_logs', off, len, @project) AS record
  FROM matching WHERE ts >= (SELECT min(ts) FROM newest)
)
SELECT record ->> '$.id' AS id,
       ts AS timestamp,
       record ->> '$.event_message' AS event_message,
       record -> '$.metadata' AS metadata
FROM candidates
ORDER BY ts DESC, id ASC
LIMIT 100
