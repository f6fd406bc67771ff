/**
 * A record as the store keeps it (StoredRecord), and the rules that read a record's explorer
 * fields and request path where its source keeps them (SOURCE_FIELDS in hot-columns.ts). They
 * live beside the hot-column table so that the store reads stored records without the import
 * code: ingest depends on the store, never the reverse.
 */
import type { SourceInfo } from '../sources.ts';
import { SOURCE_FIELDS } from './hot-columns.ts';
import { pick, type Json, type JsonObject } from './shape.ts';

/** One record ready to store: hot fields extracted, the full record serialized. */
export interface StoredRecord {
  id: string;
  ts: number;
  project: string;
  /** The full record as one JSON text (no newline), as it came: NDJSON bytes or serialized. */
  raw: Buffer | string;
  url?: string;
  families?: number;
  status?: number | null;
  functionId?: string | null;
  exec?: number | null;
  /** The explorer's fields, where the source has them (SOURCE_FIELDS). */
  method?: string | null;
  path?: string | null;
  level?: string | null;
}

/**
 * A stored record's metadata as its fields are read (field paths, filters, facets, the field
 * index): metadata given as JSON text (CSV rows, some exports) is parsed, as logs.all reads it.
 * `readable` is false when the record is not JSON at all.
 */
export function metadataOfRecord(text: string): { readable: boolean; metadata: unknown } {
  const { readable, metadata } = parsedRecord(text);
  return { readable, metadata };
}

/** A stored record parsed once for all its readers: the record, and its metadata as metadataOfRecord reads it. */
export function parsedRecord(text: string): { readable: boolean; record: unknown; metadata: unknown } {
  let rec: unknown;
  try {
    rec = JSON.parse(text);
  } catch {
    return { readable: false, record: undefined, metadata: undefined };
  }
  let metadata = rec !== null && typeof rec === 'object' ? (rec as { metadata?: unknown }).metadata : undefined;
  if (typeof metadata === 'string') {
    try {
      metadata = JSON.parse(metadata);
    } catch {
      // Refused at import; a text that is not JSON has no fields.
      metadata = undefined;
    }
  }
  return { readable: true, record: rec, metadata };
}

/**
 * The message a text search reads in a record: `event_message` as text (a message that is not
 * text as its JSON; none as empty).
 */
export function searchedMessageOf(record: unknown): string {
  const m = record !== null && typeof record === 'object' ? (record as { event_message?: unknown }).event_message : undefined;
  return typeof m === 'string' ? m : m == null ? '' : JSON.stringify(m);
}

/** The request URL a record's metadata names (`request.url`, one-element arrays looked through; metadata as JSON text parsed), or null. */
export function requestUrlOf(metadata: unknown): string | null {
  let m = metadata;
  if (typeof m === 'string') {
    try {
      m = JSON.parse(m);
    } catch {
      return null;
    }
  }
  while (Array.isArray(m)) m = m[0];
  let r = (m as { request?: unknown } | undefined)?.request;
  while (Array.isArray(r)) r = r[0];
  const url = (r as { url?: unknown } | undefined)?.url;
  return typeof url === 'string' ? url : null;
}

/** Records of one instant in the order logs.all returns them: by id, ascending (code units). */
export function compareRecordIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export type ExplorerField = 'status' | 'method' | 'path' | 'level';

/** A finite number or numeric text as a number, else null. */
export function numberOrNull(v: Json | undefined): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

/** Non-empty text (a number as its text), else null. */
export function stringOrNull(v: Json | undefined): string | null {
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number') return String(v);
  return null;
}

/** A URL's path (the text before `?` or `#` when it does not parse as a URL). */
export function pathOfUrl(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.replace(/[?#].*$/, '');
  }
}

/**
 * One explorer field of a record, read where its source keeps it (SOURCE_FIELDS): status as a
 * number, method upper-case, a path from a URL's path, level as written; null when absent.
 */
export function readSourceField(metadata: Json | undefined, source: SourceInfo, field: ExplorerField): number | string | null {
  const rule = SOURCE_FIELDS[source.name][field];
  if (!rule) return null;
  const v = 'at' in rule ? pick(metadata, rule.at) : pick(metadata, rule.urlAt);
  if (field === 'status') return numberOrNull(v);
  const text = stringOrNull(v ?? null);
  if (text === null) return null;
  if (field === 'method') return text.toUpperCase();
  return 'urlAt' in rule ? pathOfUrl(text) : text;
}

/** The explorer fields of a stored record's text (records stored before they were kept, converted ones). */
export function sourceFieldsOfStored(storedText: string, source: SourceInfo): Record<ExplorerField, number | string | null> {
  const rec = JSON.parse(storedText) as JsonObject;
  let metadata = rec.metadata;
  if (typeof metadata === 'string') {
    try {
      metadata = JSON.parse(metadata) as Json;
    } catch {
      metadata = undefined;
    }
  }
  return {
    status: readSourceField(metadata, source, 'status'),
    method: readSourceField(metadata, source, 'method'),
    path: readSourceField(metadata, source, 'path'),
    level: readSourceField(metadata, source, 'level'),
  };
}
