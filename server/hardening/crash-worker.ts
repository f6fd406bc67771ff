/**
 * Child process for saves.faults.ts: opens the store in a data folder and imports and saves in
 * a loop until killed. Each time an import has returned its report (the store says its data is
 * durable) it writes, synchronously so that the line is out before the next step:
 *
 *   ack <total> <source> <id prefix> <count>
 *
 * meaning the records `<id prefix>0` .. `<id prefix><count - 1>` of that source are acknowledged.
 * Records spread over several hours (several partitions per import); with a memory budget
 * argument the store evicts, and stages, partitions in the middle of imports.
 *
 * node --import tsx server/hardening/crash-worker.ts <dataDir> <prefix> [memoryBudgetBytes]
 */
import fs from 'node:fs';
import { importStream } from '../ingest/import.ts';
import { LogStore } from '../store/log-store.ts';
import { HOUR, NOW, edgeRecord, fnRecord } from '../testing/fixtures.ts';

const [dataDir, prefix, budget] = process.argv.slice(2);
if (!dataDir || !prefix) throw new Error('usage: crash-worker.ts <dataDir> <prefix> [memoryBudgetBytes]');

const say = (line: string) => fs.writeSync(1, `${line}\n`);
const store = await LogStore.open(dataDir, budget ? { memoryBudgetBytes: Number(budget) } : {});
const count = () => store.summary().reduce((n, s) => n + s.count, 0);
const ndjson = (records: unknown[]) => Buffer.from(records.map((r) => JSON.stringify(r)).join('\n') + '\n');

/** `n` edge records spread over `hours` hours ending at NOW (a few per second). */
const edges = (idPrefix: string, n: number, hours: number) =>
  ndjson(Array.from({ length: n }, (_, i) => edgeRecord(NOW - Math.floor(((i + 1) * hours * HOUR) / n), { id: `${idPrefix}${i}` })));
const fns = (idPrefix: string, n: number, hours: number) =>
  ndjson(Array.from({ length: n }, (_, i) => fnRecord(NOW - Math.floor(((i + 1) * hours * HOUR) / n), { id: `${idPrefix}${i}`, exec: (i % 97) + 1, status: i % 10 ? 200 : 500 })));

say(`ready ${count()}`);
for (let round = 0; ; round++) {
  const e = `${prefix}-${round}-e`;
  await importStream(store, [edges(e, 4000, 3)], { source: 'edge_logs' });
  say(`ack ${count()} cloudflare.logs.prod ${e} 4000`);
  const f = `${prefix}-${round}-f`;
  await importStream(store, [fns(f, 3000, 2)], { source: 'function_edge_logs' });
  say(`ack ${count()} deno-relay-logs ${f} 3000`);
  // A save with nothing new, and one racing an import: both must leave a store that opens.
  await store.save();
  const r = `${prefix}-${round}-r`;
  const racing = importStream(store, [edges(r, 500, 1)], { source: 'edge_logs' });
  await store.save();
  await racing;
  say(`ack ${count()} cloudflare.logs.prod ${r} 500`);
}
