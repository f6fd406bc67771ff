/**
 * Reads of a whole source for the Data page, tests, checks and exports: the per-source summary
 * (from the catalog alone) and every stored row with its full record.
 */
import type { SourceSummary } from '../../contract/api-types.ts';
import { SOURCES, type SourceInfo } from '../sources.ts';
import type { Db } from './db.ts';
import { HOT_COLUMNS } from './hot-columns.ts';
import type { Partition } from './partition.ts';
import type { StoredRecord } from './record.ts';
import type { TextDictionary } from './text-dictionary.ts';

/** One stored row as `dump` returns it: a stored record with its place in the store, read back as text. */
export interface StoredRow extends Omit<StoredRecord, 'raw' | 'families'> {
  partition: string;
  rid: number;
  raw: string;
  families?: number | null;
}

/** The API lists these (`GET /api/sources`): the shape is the contract's. */
export type { SourceSummary };

/** Counts, time span, projects and function ids per source, from the catalog. */
export function sourceSummaries(catalog: Db): SourceSummary[] {
  const rows = catalog.query<{ source: number; ref: string; function_id: string | null; count: number; min_ts: number; max_ts: number }>(
    `SELECT s.source, p.ref, f.function_id, s.count, s.min_ts, s.max_ts FROM source_summary s
     JOIN projects p ON p.id = s.project LEFT JOIN functions f ON f.id = s.function
     ORDER BY s.source, s.count DESC`,
  );
  return SOURCES.map((info) => {
    const mine = rows.filter((r) => r.source === info.code);
    const projects = new Map<string, number>();
    const functionIds: SourceSummary['functionIds'] = [];
    let count = 0;
    let min: number | null = null;
    let max: number | null = null;
    for (const r of mine) {
      count += r.count;
      projects.set(r.ref, (projects.get(r.ref) ?? 0) + r.count);
      if (r.function_id) functionIds.push({ functionId: r.function_id, project: r.ref, count: r.count });
      min = min === null ? r.min_ts : Math.min(min, r.min_ts);
      max = max === null ? r.max_ts : Math.max(max, r.max_ts);
    }
    return {
      source: info.name,
      alias: info.alias,
      count,
      minTimestamp: min,
      maxTimestamp: max,
      projects: [...projects].map(([ref, c]) => ({ ref, count: c })).sort((a, b) => b.count - a.count),
      functionIds,
    };
  });
}

/** What a dump reads: the catalog's dictionaries, and the source's partitions with a way to load them. */
export interface DumpSource {
  catalog: Db;
  urls: TextDictionary;
  partitions: readonly Partition[];
  use: (p: Partition) => Db;
}

function uuidText(bytes: Uint8Array): string {
  const h = Buffer.from(bytes).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Every stored row of a source with its id, project ref, hot fields and full record, in
 * partition order and then insertion order (for tests, checks and exports; reads all).
 */
export function dumpRows({ catalog, urls, partitions, use }: DumpSource, info: SourceInfo): StoredRow[] {
  const refs = new Map(catalog.rows('SELECT id, ref FROM projects').map(([id, ref]) => [id as number, ref as string]));
  const fns = new Map(catalog.rows('SELECT id, function_id FROM functions').map(([id, f]) => [id as number, f as string]));
  const cols = HOT_COLUMNS[info.hot];
  const out: StoredRow[] = [];
  for (const p of partitions) {
    if (p.row.rows === 0) continue;
    const db = use(p);
    const ids = new Map(db.rows('SELECT rid, id FROM ids').map(([rid, id]) => [rid as number, id instanceof Uint8Array ? uuidText(id) : (id as string)]));
    const select = `SELECT rid, ts, project, blk, boff, len${cols.map((c) => `, ${c.column}`).join('')} FROM ${info.alias} ORDER BY rid`;
    for (const [rid, ts, project, blk, boff, len, ...hot] of db.rows(select)) {
      const row: StoredRow = {
        partition: p.label,
        rid: rid as number,
        id: ids.get(rid as number)!,
        ts: ts as number,
        project: refs.get(project as number)!,
        raw: p.blocks.read({ blk: blk as number, boff: boff as number, len: len as number }).toString('utf8'),
      };
      cols.forEach((c, i) => {
        const v = hot[i] ?? null;
        if (c.field === 'url') row.url = urls.get(v as number);
        else if (c.field === 'functionId') row.functionId = v === null ? null : (fns.get(v as number) ?? null);
        else if (c.sqlType === 'TEXT') row[c.field as 'method' | 'path' | 'level'] = v as string | null;
        else row[c.field as 'status' | 'exec' | 'families'] = v as number | null;
      });
      out.push(row);
    }
  }
  return out;
}
