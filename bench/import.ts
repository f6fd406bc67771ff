/**
 * `npm run bench:import [-- --records N]`: imports N function edge + N edge records (NDJSON,
 * ~1 and ~1.5 KB per line) into the store and into a naive wide better-sqlite3 table, each in
 * its own process, and prints MB/s, records/s, peak RSS, store size, save and load time.
 */
import { parseArgs } from 'node:util';
import { fmt, mb, runChild, benchFiles } from './data.ts';

const { values } = parseArgs({ options: { records: { type: 'string', default: '1000000' } } });
const records = values.records!;
await benchFiles(Number(records)); // generate once, outside the timed children
const script = new URL('./import-run.ts', import.meta.url).pathname;
const ours = await runChild(script, ['ours', records]);
const naive = await runChild(script, ['naive', records]);

type Side = { seconds: number; bytes: number; records: number };
console.log(`\nimport bench: ${Number(records).toLocaleString('en-US')} records per source, ${new Date().toISOString()}`);
console.log('| source | MB | ours MB/s | ours rec/s | naive better-sqlite3 MB/s | ratio |');
console.log('|---|---|---|---|---|---|');
for (const source of ['cloudflare.logs.prod', 'deno-relay-logs']) {
  const o = ours[source] as Side;
  const n = naive[source] as Side | undefined;
  const oRate = mb(o.bytes) / o.seconds;
  const nRate = n ? mb(n.bytes) / n.seconds : NaN;
  console.log(`| ${source} | ${fmt(mb(o.bytes), 0)} | ${fmt(oRate)} | ${fmt(o.records / o.seconds, 0)} | ${n ? fmt(nRate) : 'n/a'} | ${n ? fmt(oRate / nRate, 2) + 'x' : 'n/a'} |`);
}
console.log(`\npeak RSS: ours ${fmt(mb(ours.peakRss as number), 0)} MB, naive ${naive.peakRss ? fmt(mb(naive.peakRss as number), 0) + ' MB' : 'n/a'}`);
console.log(`store on disk: ours ${fmt(mb(ours.storeBytes as number), 0)} MB (database ${fmt(mb(ours.dbBytes as number), 0)} MB, the rest segment files), naive ${naive.storeBytes ? fmt(mb(naive.storeBytes as number), 0) + ' MB' : 'n/a'}`);
console.log(`save ${fmt(ours.saveSeconds as number, 2)} s, load ${fmt(ours.loadSeconds as number, 2)} s`);
