/**
 * One raw record -> one StoredRecord: timestamp to microseconds, metadata to the query shape,
 * project resolved per the source's rule, id kept or derived from content, hot fields picked.
 */
import { createHash } from 'node:crypto';
import { familiesOf } from '../../contract/registry.ts';
import { HOT_COLUMNS } from '../store/hot-columns.ts';
import { numberOrNull, pathOfUrl, readSourceField, stringOrNull, type ExplorerField, type StoredRecord } from '../store/record.ts';
import { findSource, type SourceInfo } from '../sources.ts';
import { inRange, parseRecordTimestamp, RECORD_RANGE } from '../time.ts';
import { isObject, nestsDeeperThan, pick, setOwn, toQueryShape, type Json, type JsonObject } from '../store/shape.ts';

export type Normalized = { record: StoredRecord } | { error: string };

/**
 * Deepest accepted nesting of objects and arrays in a record (metadata in the ingest shape is
 * about 5 levels). Deeper records are refused at import: serializing them back (JSON.stringify
 * is recursive) could exhaust the call stack on every read of their window.
 */
export const MAX_NESTING_DEPTH = 128;

/** Longest accepted project ref; real refs are 20 characters. */
const MAX_PROJECT_LENGTH = 256;

/** CSV cells hold nested values as JSON text; these columns are text by nature. */
const TEXT_COLUMNS = new Set(['id', 'timestamp', 'event_message', 'project']);

function fromCsvRow(row: Record<string, string>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(row)) {
    if (v === '') continue;
    const t = v.trimStart();
    if (!TEXT_COLUMNS.has(k) && (t.startsWith('{') || t.startsWith('['))) {
      try {
        setOwn(out, k, JSON.parse(v) as Json);
        continue;
      } catch {
        // Not JSON after all: keep the text.
      }
    }
    setOwn(out, k, v);
  }
  return out;
}

/** A deterministic UUID-shaped id from a record's content, so re-imports dedupe. */
export function deriveId(ts: number, project: string, eventMessage: string, metadataJson: string): string {
  const h = createHash('sha256').update(`${ts}\u0000${project}\u0000${eventMessage}\u0000${metadataJson}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Supabase's hosts for a project: `<ref>.supabase.co` and `<ref>.functions.supabase.co` (refs are 20 lowercase letters or digits). */
const REF_HOST = /^([a-z0-9]{20})\.(?:functions\.)?supabase\.co$/;

/** The project ref a host names (any case, with or without a port or a trailing dot), else null. */
export function refOfHost(host: string): string | null {
  const h = host.trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  return REF_HOST.exec(h)?.[1] ?? null;
}

function hostOfUrl(url: string): string | null {
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}

/** Where a request record names its host, in order: the Host header, the request's host, the URL. */
const HOST_PATHS: ReadonlyArray<{ path: readonly string[]; url: boolean }> = [
  { path: ['request', 'headers', 'host'], url: false },
  { path: ['request', 'host'], url: false },
  { path: ['request', 'url'], url: true },
];

/**
 * The project a record's request names by its host (`<ref>.supabase.co`), with the host it
 * was read from; null when no host names one (a custom domain, a record without a request).
 */
export function projectFromRequest(metadata: Json | undefined): { ref: string; host: string } | null {
  for (const { path, url } of HOST_PATHS) {
    const v = stringOrNull(pick(metadata, path) ?? null);
    if (v === null) continue;
    const host = url ? hostOfUrl(v) : v;
    const ref = host === null ? null : refOfHost(host);
    if (ref !== null) return { ref, host: host!.toLowerCase() };
  }
  return null;
}

/**
 * The project of a record being imported: its own field when it has one; else the project its
 * request's host names; else the project option. A project option is never given to a record
 * whose host names another project: such a record is refused with a reason naming both.
 */
function resolveProject(found: string | null, metadata: Json | undefined, projectOption: string | undefined): { project: string | null } | { error: string } {
  if (found !== null) return { project: found };
  // An empty option (a blank form field) is no option.
  const option = projectOption || undefined;
  const named = projectFromRequest(metadata);
  if (named === null) return { project: option ?? null };
  if (option !== undefined && option !== named.ref) {
    return { error: `project mismatch: the record's host ${named.host} names project ${named.ref}, not the project option ${option}` };
  }
  return { project: named.ref };
}

interface Core {
  rec: JsonObject;
  ts: number;
  metadata: Json | undefined;
  project: string;
  eventMessage: string;
  givenId: string | null;
}

/**
 * The steps shared by import and read-back: timestamp, metadata, project, message, id. A
 * read-back passes the instant stored at import (`storedTs`): rules added since (the accepted
 * date range, say) must not make a stored record unreadable.
 */
function core(raw: unknown, source: SourceInfo, projectOption: string | undefined, fromCsv: boolean, storedTs?: number, stored = false): Core | { error: string } {
  if (!isObject(raw)) return { error: 'not a JSON object' };
  // As in NDJSON: a raw NUL byte in a text file means binary or UTF-16 data, not a log line.
  if (fromCsv && Object.values(raw).some((v) => typeof v === 'string' && v.includes('\u0000'))) return { error: 'contains a NUL byte' };
  const rec = fromCsv ? fromCsvRow(raw as Record<string, string>) : raw;

  let ts = storedTs;
  if (ts === undefined) {
    if (rec.timestamp === undefined || rec.timestamp === null || rec.timestamp === '') return { error: 'missing timestamp' };
    ts = parseRecordTimestamp(rec.timestamp);
    const shown = JSON.stringify(rec.timestamp).slice(0, 60);
    if (ts === undefined) return { error: `unrecognized timestamp ${shown}` };
    if (!inRange(ts, RECORD_RANGE)) return { error: `timestamp ${shown} is outside the accepted range ${RECORD_RANGE.text}` };
  }

  let metadata = rec.metadata;
  if (typeof metadata === 'string') {
    try {
      metadata = JSON.parse(metadata) as Json;
    } catch {
      return { error: 'metadata is not valid JSON' };
    }
  }
  if (metadata !== undefined && metadata !== null && !isObject(metadata) && !Array.isArray(metadata)) {
    return { error: 'metadata is neither an object nor an array of records' };
  }

  const where = source.project;
  // pick() reads either shape, so the import never builds the query shape just to look.
  const found = stringOrNull((where.in === 'record' ? rec.project : pick(metadata, [where.key])) ?? null);
  // Read back, the project resolved at import is the record's: nothing is derived or checked again.
  const resolved = stored ? { project: found ?? projectOption ?? null } : resolveProject(found, metadata, projectOption);
  if ('error' in resolved) return resolved;
  const project = resolved.project;
  if (!project) {
    const field = where.in === 'record' ? 'project' : `metadata.${where.key}`;
    return { error: `no project: the record has no ${field} and no project option was given` };
  }
  if (project.length > MAX_PROJECT_LENGTH) return { error: `project longer than ${MAX_PROJECT_LENGTH} characters` };

  const eventMessage =
    typeof rec.event_message === 'string' ? rec.event_message : rec.event_message == null ? '' : JSON.stringify(rec.event_message);
  return { rec, ts, metadata, project, eventMessage, givenId: stringOrNull(rec.id ?? null) };
}

/**
 * Validates one raw record and extracts what the store needs. The full record is stored as it
 * came (`line`, the NDJSON bytes, when given): re-serializing every record would cost more than
 * parsing it, and logs.all rebuilds the query shape for the few rows it returns.
 */
export function normalizeRecord(
  raw: unknown,
  source: SourceInfo,
  projectOption: string | undefined,
  fromCsv = false,
  line?: Buffer,
): Normalized {
  const c = core(raw, source, projectOption, fromCsv);
  if ('error' in c) return c;
  const { rec, ts, project, metadata } = c;
  // CSV metadata arrives as text: its depth counts one level below the record.
  if (nestsDeeperThan(rec, MAX_NESTING_DEPTH) || (typeof rec.metadata === 'string' && nestsDeeperThan(metadata, MAX_NESTING_DEPTH - 1))) {
    return { error: `nested deeper than ${MAX_NESTING_DEPTH} levels of objects and arrays` };
  }
  const id = c.givenId ?? deriveId(ts, project, c.eventMessage, JSON.stringify(toQueryShape(metadata)));
  const stored = line ?? JSON.stringify(rec);
  const record: StoredRecord = { id, ts, project, raw: stored };
  // Hot fields, as HOT_COLUMNS declares them per source (families last: they read the URL).
  for (const col of HOT_COLUMNS[source.hot]) {
    if (col.read === 'source') {
      const field = col.field as ExplorerField;
      const v = readSourceField(metadata, source, field);
      if (field === 'status') record.status = v as number | null;
      else record[field] = v as string | null;
      continue;
    }
    const v = pick(metadata, col.from);
    if (col.read === 'number') record[col.field as 'status' | 'exec'] = numberOrNull(v);
    else if (col.read === 'text') {
      const text = stringOrNull(v);
      if (col.field === 'url') record.url = text ?? '';
      else record.functionId = text;
    } else record.families = familiesOf(stringOrNull(v) ?? pathOfUrl(record.url ?? ''));
  }
  // SQLite keeps a NUL inside a string, but sql.js reads text back only up to it: a project
  // "ref\0x" would be listed as "ref". Dictionary strings with a NUL are refused instead.
  for (const [field, v] of [['id', id], ['project', project], ['url', record.url], ['function_id', record.functionId]] as const) {
    if (typeof v === 'string' && v.includes('\u0000')) return { error: `${field} contains a NUL character` };
  }
  return { record };
}

/**
 * A stored record as logs.all returns it: every top-level field kept, `id` (given or derived),
 * `timestamp` in µs, `event_message` text, the project where the source keeps it, and
 * `metadata` in the query shape. `project` is the ref resolved at import.
 */
export function canonicalRecord(storedText: string, source: SourceInfo, project: string, storedTs?: number): string {
  const c = storedCore(storedText, source, project, storedTs);
  const metadataJson = JSON.stringify(toQueryShape(c.metadata));
  const id = c.givenId ?? deriveId(c.ts, c.project, c.eventMessage, metadataJson);
  const full: JsonObject = { ...c.rec, id, timestamp: c.ts, event_message: c.eventMessage };
  if (source.project.in === 'record') full.project = c.project;
  delete full.metadata;
  return `${JSON.stringify(full).slice(0, -1)},"metadata":${metadataJson}}`;
}

/**
 * What the explorer answers of a stored record: the canonical record's id, event_message and
 * metadata (query shape) as values, not as JSON text to be parsed again (a page of 100 edge
 * requests spent 3 ms writing and reading that text back).
 */
export function canonicalRow(storedText: string, source: SourceInfo, project: string, storedTs?: number): { id: string; event_message: string; metadata: Json } {
  const c = storedCore(storedText, source, project, storedTs);
  const metadata = toQueryShape(c.metadata);
  return { id: c.givenId ?? deriveId(c.ts, c.project, c.eventMessage, JSON.stringify(metadata)), event_message: c.eventMessage, metadata };
}

/** A stored record read back: it normalized at import, so failing now is a bug, not bad input. */
function storedCore(storedText: string, source: SourceInfo, project: string, storedTs: number | undefined) {
  const c = core(JSON.parse(storedText) as unknown, source, project, false, storedTs, true);
  if ('error' in c) throw new Error(`stored record no longer normalizes: ${c.error}`);
  return c;
}

/**
 * Recognizes a source from a record's shape, or undefined when the shape is ambiguous
 * (pgbouncer and PostgREST records carry nothing distinctive; they need a name).
 */
export function sourceFromShape(raw: unknown, fromCsv = false): SourceInfo | undefined {
  if (!isObject(raw)) return undefined;
  const rec = fromCsv ? fromCsvRow(raw as Record<string, string>) : raw;
  let meta = rec.metadata;
  if (typeof meta === 'string') {
    try {
      meta = JSON.parse(meta) as Json;
    } catch {
      return undefined;
    }
  }
  const has = (...path: string[]) => pick(meta, path) !== undefined;
  const named = (n: string) => findSource(n);
  if (has('function_id') && (has('execution_time_ms') || has('response'))) return named('deno-relay-logs');
  if (has('function_id') && (has('event_type') || has('execution_id'))) return named('deno-subhosting-events');
  if (has('request', 'url') && has('response', 'status_code')) return named('cloudflare.logs.prod');
  if (has('parsed', 'error_severity') || has('parsed', 'backend_type')) return named('postgres.logs');
  if (has('auth_event') || (has('component') && has('msg'))) return named('gotrue.logs.prod');
  if (pick(meta, ['context', 'application']) === 'realtime' || has('external_id')) return named('realtime.logs.prod');
  if (has('tenantId') || has('reqId')) return named('storage.logs.prod.2');
  return undefined;
}
