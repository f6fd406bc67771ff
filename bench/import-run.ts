/** One side of the import bench, in its own process so peak RSS is its own. */
import fs from 'node:fs';
import path from 'node:path';
import { importFile } from '../server/ingest/import.ts';
import { LogStore } from '../server/store/log-store.ts';
import { benchFiles, BENCH_DIR, peakRss } from './data.ts';
import { naiveImport, openNative } from './naive.ts';

const [engine = 'ours', recordsArg = '1000000'] = process.argv.slice(2);
const files = await benchFiles(Number(recordsArg));
const result: Record<string, unknown> = { engine };

function dirSize(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? dirSize(p) : fs.statSync(p).size;
  }
  return total;
}

if (engine === 'ours') {
  const dataDir = path.join(BENCH_DIR, 'store-ours');
  fs.rmSync(dataDir, { recursive: true, force: true });
  const store = await LogStore.open(dataDir);
  for (const f of files) {
    const t = performance.now();
    const report = await importFile(store, f.path, { source: f.source });
    const s = (performance.now() - t) / 1000;
    result[f.source] = { seconds: s, bytes: f.bytes, records: report.imported, rejected: report.rejected };
  }
  let t = performance.now();
  await store.save();
  result.saveSeconds = (performance.now() - t) / 1000;
  await store.close();
  result.storeBytes = dirSize(dataDir);
  result.dbBytes = fs.statSync(path.join(dataDir, 'store.sqlite')).size;
  t = performance.now();
  const reopened = await LogStore.open(dataDir);
  result.loadSeconds = (performance.now() - t) / 1000;
  await reopened.close();
} else {
  const db = openNative(path.join(BENCH_DIR, 'naive.sqlite'));
  if (!db) {
    console.log(JSON.stringify({ engine, unavailable: true }));
    process.exit(0);
  }
  for (const f of files) {
    const t = performance.now();
    const n = await naiveImport(db, f.path, f.source);
    result[f.source] = { seconds: (performance.now() - t) / 1000, bytes: f.bytes, records: n };
  }
  db.close();
  result.storeBytes = fs.statSync(path.join(BENCH_DIR, 'naive.sqlite')).size;
}
result.peakRss = peakRss();
console.log(JSON.stringify(result));
