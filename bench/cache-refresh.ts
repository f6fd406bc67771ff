/**
 * `npx tsx bench/cache-refresh.ts [--records 100000 --patterns 1500]`: what the results
 * cache's background refresh costs the requests it competes with. The shape of the case that
 * once blocked the server for two minutes: N edge records, P distinct usage.api-counts patterns
 * each asked twice (so each is due for a refresh), then the cache's clock jumps past the warm
 * interval and the refresh runs on its real timer while logs.all is probed every 20 ms.
 *
 * Prints how long a compute takes, how long the refresh of all due entries took, and the
 * probes' waits (p50/p99/max). There is nothing to put DuckDB beside here: DuckDB has no
 * results cache; the figure that matters is the probes' longest wait against the 250 ms goal.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { createApp } from '../server/app.ts';
import { AppClock } from '../server/clock.ts';
import { CACHE_TICK_MS, ResultsCache } from '../server/endpoints/cache.ts';
import { importStream } from '../server/ingest/import.ts';
import { LogStore } from '../server/store/log-store.ts';
import { HOST, NOW, TEST_KEY, TEST_PORT, edgeRecord, tempDir } from '../server/testing/fixtures.ts';

const { values } = parseArgs({ options: { records: { type: 'string', default: '100000' }, patterns: { type: 'string', default: '1500' } } });
const RECORDS = Number(values.records);
const PATTERNS = Number(values.patterns);
const P = 'projaaaaaaaaaaaaaaaa';

const dir = tempDir('le-cache-bench-');
const store = await LogStore.open(dir);
const lines: string[] = [];
for (let i = 0; i < RECORDS; i++) {
  const url = `https://${P}.supabase.co/rest/v1/t${i % 2000}?select=*&page=${i}`;
  lines.push(JSON.stringify(edgeRecord(NOW - (i + 1) * 1_000_000, { id: `e${i}`, url })));
}
await importStream(store, [Buffer.from(lines.join('\n') + '\n')], { source: 'edge_logs' });

// Real elapsed time plus a jump: the refresh budget is measured on it, as in the server.
let jump = 0;
const cache = new ResultsCache(() => performance.now() + jump);
const clock = new AppClock(() => null);
clock.set('fixed', NOW);
const { app } = createApp({ store, clock, apiKey: TEST_KEY, port: () => TEST_PORT, cache });
const get = async (p: string) => {
  const res = await app.request(`http://${HOST}${p}`, { headers: { host: HOST, 'x-api-key': TEST_KEY } });
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  await res.arrayBuffer();
};
const patternUrl = (k: number) => `/api/endpoints/usage.api-counts?interval=daily&project=${encodeURIComponent(`${P}.*/rest/v1/t${k}\\?`)}`;

// Each pattern asked twice in a row (a miss, then a hit): the entries the bound keeps are all due.
let computeTotal = 0;
for (let k = 0; k < PATTERNS; k++) {
  const t0 = performance.now();
  await get(patternUrl(k));
  computeTotal += performance.now() - t0;
  await get(patternUrl(k));
}
const computeMs = computeTotal / PATTERNS;
console.log(`${RECORDS} edge records, ${PATTERNS} patterns asked; the cache keeps ${cache.size} entries (${(cache.bytes / 1024).toFixed(0)} KiB); one compute ≈ ${computeMs.toFixed(1)} ms`);

// Past the warm interval: every entry is due. The server's timer drives the refresh.
jump += 300_000;
let computes = 0;
const refreshStart = performance.now();
const timer = setInterval(() => void cache.tick(), CACHE_TICK_MS);
const waits: number[] = [];
const probe = `/api/endpoints/logs.all?project=${P}&project_tier=ENTERPRISE`;
// The refresh is done when a full second of ticks leaves every entry computed after the jump.
const doneBy = () => {
  const probeCache = cache as unknown as { entries: Map<string, { computedAt: number }> };
  computes = [...probeCache.entries.values()].filter((e) => e.computedAt >= refreshStart + jump).length;
  return computes >= cache.size;
};
while (!doneBy()) {
  const t0 = performance.now();
  await get(probe);
  waits.push(performance.now() - t0);
  await new Promise((r) => setTimeout(r, 20));
  // Entries expire 900 s after their first computation: stop before the jump makes them.
  if (performance.now() - refreshStart > 500_000) break;
}
const refreshMs = performance.now() - refreshStart;
clearInterval(timer);
waits.sort((a, b) => a - b);
const q = (p: number) => waits[Math.min(waits.length - 1, Math.floor(p * waits.length))]!.toFixed(1);
console.log(`refreshed ${computes} of ${cache.size} due entries in ${(refreshMs / 1000).toFixed(1)} s`);
console.log(`logs.all probes during the refresh: ${waits.length}, wait p50 ${q(0.5)} ms, p99 ${q(0.99)} ms, max ${waits[waits.length - 1]!.toFixed(1)} ms`);
await store.close();
fs.rmSync(dir, { recursive: true, force: true });
