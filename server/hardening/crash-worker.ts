/**
 * Child process for saves.faults.ts: opens the store in a data folder and imports and saves in
 * a loop until killed, writing `ack <count>` (synchronously, so it is out before the next step)
 * each time an import has returned its report, i.e. once the store says the data is durable.
 *
 * node --import tsx server/hardening/crash-worker.ts <dataDir> <prefix>
 */
import fs from 'node:fs';
import { importStream } from '../ingest/import.ts';
import { LogStore } from '../store/log-store.ts';
import { edgeNdjson, fnNdjson } from './helpers.ts';

const [dataDir, prefix] = process.argv.slice(2);
if (!dataDir || !prefix) throw new Error('usage: crash-worker.ts <dataDir> <prefix>');

const say = (line: string) => fs.writeSync(1, `${line}\n`);
const store = await LogStore.open(dataDir);
const count = () => store.summary().reduce((n, s) => n + s.count, 0);
say(`ready ${count()}`);
for (let round = 0; ; round++) {
  const edge = Buffer.from(edgeNdjson(4000, { prefix: `${prefix}-${round}-` }));
  await importStream(store, [edge], { source: 'edge_logs' });
  say(`ack ${count()}`);
  const fn = Buffer.from(fnNdjson(3000, `${prefix}-${round}-f`));
  await importStream(store, [fn], { source: 'function_edge_logs' });
  say(`ack ${count()}`);
  // A save with nothing new, and one racing an import: both must leave a loadable file.
  await store.save();
  const racing = importStream(store, [Buffer.from(edgeNdjson(500, { prefix: `${prefix}-${round}-r` }))], { source: 'edge_logs' });
  await store.save();
  await racing;
  say(`ack ${count()}`);
}
