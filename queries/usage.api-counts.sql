-- usage.api-counts
-- Parameters: @project (an RE2 pattern matched anywhere in the request URL), @now (the clock,
--             µs). The registry entry's rules (queries/registry.ts) bind the rest: @span_us and
--             @unit_us, the window and bucket width of the requested @interval (validated
--             before the query runs).
-- Columns:    timestamp (DATETIME text YYYY-MM-DDTHH:MM:SS, UTC bucket start),
--             total_rest_requests, total_storage_requests, total_auth_requests,
--             total_realtime_requests.
-- Rules:      edge request logs whose URL contains a match of @project and whose timestamp is
--             at or after now - span; grouped by trunc(ts, unit); a record counts in every
--             family whose string its path contains (bits of `families`); only buckets with
--             records appear, ascending. The pattern runs once per distinct URL.
WITH params AS (
  SELECT CAST(@now AS INTEGER) - CAST(@span_us AS INTEGER) AS start,
         CAST(@unit_us AS INTEGER) AS unit
),
-- Ids of the distinct URLs the pattern matches (remembered per pattern between queries).
matched_urls AS (
  SELECT value AS id FROM json_each(re2_url_ids(@project))
)
SELECT strftime('%Y-%m-%dT%H:%M:%S', (e.ts - e.ts % p.unit) / 1000000, 'unixepoch') AS timestamp,
       sum((e.families & 1) != 0) AS total_rest_requests,
       sum((e.families & 2) != 0) AS total_storage_requests,
       sum((e.families & 4) != 0) AS total_auth_requests,
       sum((e.families & 8) != 0) AS total_realtime_requests
FROM edge_logs e, params p
WHERE e.ts >= p.start AND e.url IN (SELECT id FROM matched_urls)
GROUP BY e.ts - e.ts % p.unit
ORDER BY e.ts - e.ts % p.unit
