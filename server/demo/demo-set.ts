/**
 * The demo data set on disk: one `<alias>.ndjson` per source (ingest shape, µs timestamps,
 * ids present), and `variants/` with the same edge records in every export form the importer
 * accepts. Used by `npm run demo-data` and by the server to seed its demo data on first start.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SOURCES, type SourceName } from '../sources.ts';
import { generateRecords } from './generate.ts';
import {
  EXPORT_FORMATS,
  EXPORT_SHAPES,
  exportExtension,
  TIMESTAMP_FORMS,
  writeExport,
  type ExportOptions,
} from './write-export.ts';

export interface DemoSetOptions {
  /** Integer microseconds UTC: every record is at or before it, none older than 90 days. */
  now: number;
  /** Records for `cloudflare.logs.prod` and `deno-relay-logs`; the others get max(100, records/10). */
  records: number;
  seed: number;
}

export interface DemoSetFile {
  /** Path relative to the output folder, `/`-separated (e.g. `variants/edge_logs.query.iso.csv`). */
  file: string;
  source: SourceName;
  records: number;
  bytes: number;
}

export interface DemoSetSummary {
  files: DemoSetFile[];
  records: number;
  bytes: number;
}

const BUSY_SOURCES: ReadonlySet<SourceName> = new Set(['cloudflare.logs.prod', 'deno-relay-logs']);

/** How many records each source gets for a given `records` option. */
export function demoRecordCount(source: SourceName, records: number): number {
  return BUSY_SOURCES.has(source) ? records : Math.max(100, Math.floor(records / 10));
}

/** How many edge records each file in `variants/` holds. */
export function variantRecordCount(records: number): number {
  return Math.min(records, 500);
}

/**
 * Writes the demo set into `outDir` (created if missing; existing files of the same names are
 * replaced). Every variant holds the same edge records, so importing several of them must
 * dedupe to one copy (except the `no-ids` variant, whose ids are derived); with records <= 500
 * they are also exactly the records of `edge_logs.ndjson`.
 */
export async function writeDemoSet(outDir: string, opts: DemoSetOptions): Promise<DemoSetSummary> {
  const { now, records, seed } = opts;
  if (!Number.isSafeInteger(records) || records < 0) throw new Error(`records must be a non-negative integer, got ${records}`);
  await mkdir(join(outDir, 'variants'), { recursive: true });
  const files: DemoSetFile[] = [];

  for (const s of SOURCES) {
    const file = `${s.alias}.ndjson`;
    const count = demoRecordCount(s.name, records);
    const res = await writeExport(join(outDir, file), generateRecords(s.name, { now, count, seed }), {
      source: s.name,
      format: 'ndjson',
    });
    files.push({ file, source: s.name, records: res.records, bytes: res.bytes });
  }

  const edge = SOURCES.find((s) => s.name === 'cloudflare.logs.prod')!;
  const count = variantRecordCount(records);
  const variants: Array<{ name: string; options: Omit<ExportOptions, 'source'> }> = [];
  for (const format of EXPORT_FORMATS) {
    for (const shape of EXPORT_SHAPES) {
      for (const timestamp of TIMESTAMP_FORMS) {
        variants.push({ name: `${edge.alias}.${shape}.${timestamp}.${exportExtension(format)}`, options: { format, shape, timestamp } });
      }
    }
  }
  // The byte-level options, on the forms where they matter most.
  variants.push(
    { name: `${edge.alias}.ingest.micros.bom-crlf.ndjson`, options: { format: 'ndjson', bom: true, crlf: true } },
    { name: `${edge.alias}.query.iso.bom-crlf.csv`, options: { format: 'csv', shape: 'query', timestamp: 'iso', bom: true, crlf: true } },
    { name: `${edge.alias}.ingest.micros.no-ids.ndjson`, options: { format: 'ndjson', omitIds: true } },
  );
  for (const v of variants) {
    const file = `variants/${v.name}`;
    const res = await writeExport(join(outDir, file), generateRecords(edge.name, { now, count, seed }), {
      source: edge.name,
      ...v.options,
    });
    files.push({ file, source: edge.name, records: res.records, bytes: res.bytes });
  }

  return {
    files,
    records: files.reduce((n, f) => n + f.records, 0),
    bytes: files.reduce((n, f) => n + f.bytes, 0),
  };
}
