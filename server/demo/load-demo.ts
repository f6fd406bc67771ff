/**
 * The embedded demo data: all nine sources generated relative to the clock and streamed
 * straight into the importer (no temp files), so a fresh install has something to explore.
 */
import type { ImportReport } from '../ingest/import.ts';
import { importStream } from '../ingest/import.ts';
import { SOURCES } from '../sources.ts';
import type { LogStore } from '../store/log-store.ts';
import { demoRecordCount } from './demo-set.ts';
import { generateRecords, type DemoRecord } from './generate.ts';

/** Records of the two busiest sources; the other seven get a tenth. */
export const DEMO_RECORDS = 20_000;

function* ndjsonChunks(records: Iterable<DemoRecord>): Generator<Buffer> {
  let lines: string[] = [];
  for (const r of records) {
    lines.push(JSON.stringify(r));
    if (lines.length === 1000) {
      yield Buffer.from(`${lines.join('\n')}\n`);
      lines = [];
    }
  }
  if (lines.length) yield Buffer.from(`${lines.join('\n')}\n`);
}

export async function loadDemoData(store: LogStore, now: number, records = DEMO_RECORDS, seed = 1): Promise<ImportReport[]> {
  const reports: ImportReport[] = [];
  for (const s of SOURCES) {
    const generated = generateRecords(s.name, { now, count: demoRecordCount(s.name, records), seed });
    reports.push(await importStream(store, ndjsonChunks(generated), { source: s.name, fileName: `demo:${s.alias}` }));
  }
  return reports;
}
