/**
 * Which source each record of an import goes to, and in which shape (docs/ARCHITECTURE.md,
 * "Import"). A record is told by its content, one by one: a row of ClickHouse's `logs` table
 * (clickhouse-shape.ts) goes to the source its `source` column names and is rebuilt as a
 * BigQuery-era record; any other record belongs to the import's source (given, named by the file,
 * or recognized from the first records), as before. So one file may fill several sources.
 */
import type { SourceInfo } from '../sources.ts';
import { fromClickHouseRow, isClickHouseRow, sourceOfClickHouse } from './clickhouse-shape.ts';
import { sourceFromShape } from './normalize.ts';
import { isObject, setOwn, type JsonObject } from '../store/shape.ts';

/** The columns of a `logs` row; in a CSV without a `log_attributes` column, every other column is one attribute. */
const ROW_COLUMNS = new Set(['id', 'timestamp', 'event_message', 'severity_text', 'source', 'log_attributes']);

/**
 * Whether a raw item is a row of the `logs` table. Besides isClickHouseRow, a CSV row with a
 * `source` column or dotted column names (one column per attribute: `request.method`) and no
 * `metadata` column: BigQuery-era downloads have neither.
 */
export function isLogsRow(value: unknown, fromCsv = false): boolean {
  if (!isObject(value)) return false;
  if (isClickHouseRow(value)) return true;
  if (!fromCsv || Object.hasOwn(value, 'metadata')) return false;
  return Object.hasOwn(value, 'source') || Object.keys(value).some((k) => k.includes('.'));
}

/**
 * A CSV row of the `logs` table as the row it stands for. An empty cell is a key the row does
 * not have (a file mixing sources leaves the other sources' columns empty). Without a
 * `log_attributes` column, each other column is an attribute named by its header.
 */
export function logsRowOfCsv(cells: Readonly<Record<string, string>>): { row: JsonObject } | { error: string } {
  // As for every CSV row: a raw NUL in a text file means binary or UTF-16 data.
  if (Object.values(cells).some((v) => typeof v === 'string' && v.includes('\u0000'))) return { error: 'contains a NUL byte' };
  const hasMap = Object.hasOwn(cells, 'log_attributes');
  const row: JsonObject = {};
  const attributes: JsonObject = {};
  for (const [key, value] of Object.entries(cells)) {
    if (value === '') continue;
    setOwn(ROW_COLUMNS.has(key) || hasMap ? row : attributes, key, value);
  }
  if (!hasMap) setOwn(row, 'log_attributes', attributes);
  return { row };
}

/** What routeRecord needs to know about the import. */
export interface Routing {
  /** The import's `source` option: a row naming another source is refused. */
  given?: SourceInfo;
  /** The source the file name names: taken by rows of the `logs` table that name none. */
  named?: SourceInfo;
  /** The source of BigQuery-era records: given, named, or recognized from the first records. */
  classic?: SourceInfo;
}

/**
 * A record routed: its source and the value to normalize (a `logs` row rebuilt in the ingest
 * shape, with no CSV text and no line bytes to keep), or why it is refused and, when known,
 * the source it named.
 */
export type Routed = { source: SourceInfo; value: unknown; fromCsv: boolean; raw?: Buffer } | { error: string; source?: SourceInfo };

/** Routes one raw item (see the module comment). */
export function routeRecord(value: unknown, fromCsv: boolean, raw: Buffer | undefined, routing: Routing): Routed {
  if (!isObject(value)) return { error: 'not a JSON object' };
  if (!isLogsRow(value, fromCsv)) {
    if (!routing.classic) return { error: 'cannot tell the source of this record from its shape; give the import a source (name or alias)' };
    return { source: routing.classic, value, fromCsv, ...(raw ? { raw } : {}) };
  }
  let row = value as JsonObject;
  if (fromCsv) {
    const r = logsRowOfCsv(value as Record<string, string>);
    if ('error' in r) return r;
    row = r.row;
  }
  let source: SourceInfo | undefined;
  const own = row.source;
  if (own === undefined || own === null || own === '') {
    source = routing.given ?? routing.named;
    if (!source) return { error: 'no source: a row of the logs table names its source in `source`, and the import was given none' };
  } else {
    if (typeof own !== 'string') return { error: 'source is not text' };
    source = sourceOfClickHouse(own);
    // fromClickHouseRow words the refusal (unknown source, with the known ones).
    if (!source) return { error: (fromClickHouseRow(row) as { error: string }).error };
    if (routing.given && source !== routing.given) {
      return {
        error: `source ${JSON.stringify(own).slice(0, 60)} is stored in ${source.name}, not in ${routing.given.name}, the source this import was given; import the file without a source to store each row in its own`,
        source,
      };
    }
  }
  const converted = fromClickHouseRow(row, source);
  if ('error' in converted) return { error: converted.error, source };
  return { source, value: converted.record, fromCsv: false };
}

/**
 * The import's own source (the report's `source`) and the source of its BigQuery-era records,
 * from the `source` option, the file name and the first records (`sample`). A file that starts
 * with rows of the `logs` table has for its source the one its first storable row goes to; one
 * that starts with BigQuery-era records, the source their shape tells. Undefined: the import
 * cannot tell.
 */
export function importSources(
  sample: ReadonlyArray<{ value?: unknown; fromCsv?: boolean }>,
  given: SourceInfo | undefined,
  named: SourceInfo | undefined,
): { primary?: SourceInfo; classic?: SourceInfo } {
  const items = sample.filter((i) => i.value !== undefined);
  const firstClassic = items.find((i) => !isLogsRow(i.value, i.fromCsv));
  const classic = given ?? named ?? (firstClassic ? sourceFromShape(firstClassic.value, firstClassic.fromCsv) : undefined);
  if (given) return { primary: given, classic };
  const first = items[0];
  if (!first || !isLogsRow(first.value, first.fromCsv)) return { primary: classic, classic };
  // The source the first row that can be stored goes to.
  for (const item of items) {
    if (!isLogsRow(item.value, item.fromCsv)) continue;
    const own = (item.value as JsonObject).source;
    const primary = own === undefined || own === null || own === '' ? named : typeof own === 'string' ? sourceOfClickHouse(own) : undefined;
    if (primary) return { primary, classic };
  }
  return { classic };
}
