-- functions.invocation-stats
-- Parameters: @project (project ref), @function_id (one function id, or '' / NULL for all),
--             @now (the clock, integer microseconds UTC). The registry entry's rules
--             (queries/registry.ts) bind the rest: @span_us and @unit_us, the window and bucket
--             width of the requested interval (any value the entry does not list behaves as its
--             fallback interval), and @error_status_at_least, the error rule.
-- Columns:    timestamp (µs, bucket start), min/max/avg/p95/p99_execution_time (ms, NULL for an
--             empty bucket), count, error_count.
-- Rules:      buckets from trunc(now - span, unit) to trunc(now, unit) inclusive, one row each,
--             ascending (span / unit + 1 rows when the unit divides the span); a record belongs
--             to trunc(ts, unit); records outside the series are not counted; error_count counts
--             status_code >= @error_status_at_least; records without an execution time count but
--             stay out of the aggregates; p95/p99 are nearest-rank (exact for second buckets and
--             one function's minute buckets, within 1% for the minute buckets of all functions
--             and for hour and day buckets). The widths below (60000000, 3600000000,
--             86400000000) are the rollup tables' own grains, not rules.
WITH params AS (
  SELECT
    CAST(@now AS INTEGER) AS now,
    CAST(@span_us AS INTEGER) AS span,
    CAST(@unit_us AS INTEGER) AS unit
),
bounds AS (
  SELECT unit, (now - span) - (now - span) % unit AS first, now - now % unit AS last FROM params
),
buckets(ts) AS (
  SELECT first FROM bounds
  UNION ALL
  SELECT ts + (SELECT unit FROM bounds) FROM buckets WHERE ts < (SELECT last FROM bounds)
),
-- Second buckets, and the minute buckets of one function: exact, from the records.
raw AS (
  SELECT f.ts - f.ts % b.unit AS bucket,
         count(*) AS count,
         sum(f.status >= CAST(@error_status_at_least AS INTEGER)) AS error_count,
         min(f.exec) AS min_execution_time,
         max(f.exec) AS max_execution_time,
         avg(f.exec) AS avg_execution_time,
         nearest_rank(f.exec, 95) AS p95_execution_time,
         nearest_rank(f.exec, 99) AS p99_execution_time
  FROM bounds b, function_edge_logs f
  WHERE (b.unit < 60000000 OR (b.unit < 3600000000 AND coalesce(@function_id, '') <> ''))
    AND f.project = (SELECT id FROM projects WHERE ref = @project)
    AND f.ts >= b.first AND f.ts < b.last + b.unit
    AND (coalesce(@function_id, '') = ''
         OR f.function = (SELECT id FROM functions WHERE function_id = @function_id))
  GROUP BY 1
),
-- Every other bucket from the rollups of its own width: per minute (the minute buckets of all
-- functions: minute rollups keep only the all-functions row), per hour, per day. Exact
-- count/errors/min/max/avg; p95/p99 from merged sketches, within 1% of nearest rank. Each
-- rollup keeps a row per function and one for all functions (function = -1).
rollups(width, at, project, function, count, errors, exec_n, exec_sum, exec_min, exec_max, sketch) AS (
  SELECT 60000000, minute, project, function, count, errors, exec_n, exec_sum, exec_min, exec_max, sketch FROM function_edge_minutes
  UNION ALL
  SELECT 3600000000, hour, project, function, count, errors, exec_n, exec_sum, exec_min, exec_max, sketch FROM function_edge_hours
  UNION ALL
  SELECT 86400000000, day, project, function, count, errors, exec_n, exec_sum, exec_min, exec_max, sketch FROM function_edge_days
),
rolled AS (
  SELECT m.at AS bucket,
         sum(m.count) AS count,
         sum(m.errors) AS error_count,
         min(m.exec_min) AS min_execution_time,
         max(m.exec_max) AS max_execution_time,
         sum(m.exec_sum) / nullif(sum(m.exec_n), 0) AS avg_execution_time,
         sketch_merge(m.sketch) AS sketch
  FROM bounds b, rollups m
  WHERE m.width = b.unit
    AND NOT (b.unit < 3600000000 AND coalesce(@function_id, '') <> '')
    AND m.project = (SELECT id FROM projects WHERE ref = @project)
    AND m.at >= b.first AND m.at < b.last + b.unit
    AND m.function = CASE WHEN coalesce(@function_id, '') = '' THEN -1
                          ELSE (SELECT id FROM functions WHERE function_id = @function_id) END
  GROUP BY 1
),
agg AS (
  SELECT * FROM raw
  UNION ALL
  SELECT bucket, count, error_count, min_execution_time, max_execution_time, avg_execution_time,
         sketch_quantile(sketch, 95, min_execution_time, max_execution_time),
         sketch_quantile(sketch, 99, min_execution_time, max_execution_time)
  FROM rolled
)
SELECT buckets.ts AS timestamp,
       agg.min_execution_time, agg.max_execution_time, agg.avg_execution_time,
       agg.p95_execution_time, agg.p99_execution_time,
       coalesce(agg.count, 0) AS count,
       coalesce(agg.error_count, 0) AS error_count
FROM buckets LEFT JOIN agg ON agg.bucket = buckets.ts
ORDER BY buckets.ts
