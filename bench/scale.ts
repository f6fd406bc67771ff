/**
 * `npm run bench [-- --sizes 100000,1000000,2000000]`: the scale figures of the project's
 * targets, ours beside the naive better-sqlite3 baseline from the same run, and how each
 * grows with the records (N function edge + N edge records per size).
 */
import { parseArgs } from 'node:util';
import { benchFiles, fmt, mb, runChild } from './data.ts';

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '100000,1000000' } } });
const sizes = values.sizes!.split(',').map(Number);
const script = new URL('./scale-run.ts', import.meta.url).pathname;
const results: Array<{ n: number; ours: Record<string, number>; naive: Record<string, number> }> = [];
for (const n of sizes) {
  await benchFiles(n);
  const ours = (await runChild(script, ['ours', String(n)])) as Record<string, number>;
  const naive = (await runChild(script, ['naive', String(n)])) as Record<string, number>;
  results.push({ n, ours, naive });
}

type Row = [label: string, key: string, unit: string, target: string, better: 'low' | 'high'];
const ROWS: Row[] = [
  ['import, edge NDJSON', 'importEdgeMBs', 'MB/s', '≥ 100', 'high'],
  ['import, function edge NDJSON', 'importFnMBs', 'MB/s', '≥ 100', 'high'],
  ...['5min', '15min', '1hr', '1day', '7day'].map((iv): Row => [`invocation-stats ${iv}, uncached p50`, `stats ${iv}`, 'ms', '≤ 20', 'low']),
  ...['minutely', 'hourly', 'daily'].map((iv): Row => [`usage.api-counts ${iv}, uncached p50`, `api ${iv}`, 'ms', '≤ 20', 'low']),
  ['logs.all p50 (PRO)', 'logs.all', 'ms', '≤ 5', 'low'],
  ['cached request over loopback p50', 'cachedP50', 'ms', '≤ 1', 'low'],
  ['cached requests/s (10 connections)', 'cachedReqPerSec', 'req/s', '≥ 5,000', 'high'],
  ['peak RSS (import, queries, save)', 'peakRss', 'MB', '≤ 1,024', 'low'],
  ['longest pause of answers during a save', 'longestPauseDuringSave', 'ms', '≤ 250', 'low'],
  ['cold start to first answer', 'coldStartSeconds', 's', '≤ 2', 'low'],
  ['logs.all during the edge import, p99', 'logsDuringImportP99', 'ms', '≤ 250', 'low'],
];

console.log(`\nscale bench, ${new Date().toISOString()}, sizes ${sizes.map((n) => n.toLocaleString('en-US')).join(' / ')} (records per source)`);
const header = ['figure', 'target', ...sizes.flatMap((n) => [`ours @${n / 1000}k`, `naive @${n / 1000}k`, 'ratio'])];
console.log(`| ${header.join(' | ')} |`);
console.log(`|${header.map(() => '---').join('|')}|`);
for (const [label, key, unit, target, better] of ROWS) {
  const cells = results.flatMap(({ ours, naive }) => {
    const conv = (v: number | undefined) => (v === undefined || v === null ? undefined : key === 'peakRss' ? mb(v) : v);
    const o = conv(ours[key]);
    const nv = conv(naive[key]);
    const ratio = o !== undefined && nv !== undefined ? (better === 'high' ? o / nv : nv / o) : undefined;
    return [o === undefined ? '–' : fmt(o, unit === 'ms' || unit === 's' ? 2 : 0), nv === undefined ? '–' : fmt(nv, unit === 'ms' ? 2 : 0), ratio === undefined ? '–' : `${fmt(ratio, 2)}x`];
  });
  console.log(`| ${label} (${unit}) | ${target} | ${cells.join(' | ')} |`);
}
console.log('\nratio: how many times better ours is than the naive baseline (>1 = ours better).');
