/**
 * Function slugs (`/functions/v1/<slug>`), read from the function's own edge records: the store
 * keeps only function ids, but every invocation record names the URL it was called at. Derived
 * lazily from the newest records of each function and cached per store data version, so the
 * store's schema and import path stay as they are.
 */
import { isObject, pick, type Json } from '../store/shape.ts';
import type { LogStore } from '../store/log-store.ts';
import { sourceInfo, type SourceName } from '../sources.ts';

const FUNCTION_EDGE: SourceName = 'deno-relay-logs';
/** Newest records tried per partition: one without a URL (a lost field) should not leave the slug empty. */
const RECORDS_PER_PARTITION = 8;
/** Partitions tried per function, newest first: bounds the work for a function whose records never name a URL. */
const PARTITIONS_PER_FUNCTION = 3;
/** Longer path segments are not slugs (Supabase caps function names far below this). */
const MAX_SLUG_LENGTH = 256;

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The slug in a function URL: `https://<ref>.supabase.co/functions/v1/<slug>[/...][?...]` (also
 * a local `http://127.0.0.1:54321/functions/v1/<slug>`), or the first path segment on a
 * functions host `https://<ref>.functions.supabase.co/<slug>`. Null for anything else.
 */
export function slugFromUrl(url: string): string | null {
  let parsed: URL;
  try {
    // A bare path (`/functions/v1/x?y`) is read against a placeholder origin.
    parsed = new URL(url, 'http://relative.invalid');
  } catch {
    return null;
  }
  const segments = parsed.pathname.split('/').filter((s) => s !== '');
  let slug: string | undefined;
  const at = segments.findIndex((s, i) => s === 'functions' && segments[i + 1] === 'v1');
  if (at >= 0) slug = segments[at + 2];
  else if (parsed.hostname.toLowerCase().split('.')[1] === 'functions') slug = segments[0];
  if (slug === undefined) return null;
  const text = decodeSegment(slug);
  return text === '' || text.length > MAX_SLUG_LENGTH ? null : text;
}

/** The URL a stored function edge record was called at: `metadata.request.url` (either metadata shape), else the one in its event message. */
export function urlOfRecord(text: string): string | null {
  let rec: unknown;
  try {
    rec = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(rec)) return null;
  let metadata: Json | undefined = rec.metadata;
  // JSON exports may carry metadata as JSON text, as the import accepts.
  if (typeof metadata === 'string') {
    try {
      metadata = JSON.parse(metadata) as Json;
    } catch {
      metadata = undefined;
    }
  }
  const url = pick(metadata, ['request', 'url']);
  if (typeof url === 'string' && url !== '') return url;
  // `POST | 200 | https://...`: the relay's message ends with the URL.
  const message = typeof rec.event_message === 'string' ? rec.event_message : '';
  return message.split(' | ').find((part) => /^https?:\/\//i.test(part.trim()))?.trim() ?? null;
}

/** The slug a stored record names, or null. */
export function slugOfRecord(text: string): string | null {
  const url = urlOfRecord(text);
  return url === null ? null : slugFromUrl(url);
}

interface SlugCache {
  dataVersion: number;
  /** `${project}:${function}` (dictionary ids) -> slug, or null when no record names one. */
  slugs: Map<string, string | null>;
}

const caches = new WeakMap<LogStore, SlugCache>();

/** When each function of a project was last seen (µs), from the catalog's summary. */
function newestOf(store: LogStore, project: number): Map<number, number> {
  const rows = store.catalog.rows('SELECT function, max_ts FROM source_summary WHERE source = ? AND project = ?', [sourceInfo(FUNCTION_EDGE).code, project]);
  return new Map(rows.map(([f, ts]) => [f as number, ts as number]));
}

/** The slug of one function, from its newest records (see the module comment). */
function deriveSlug(store: LogStore, project: number, fn: number, newest: number | undefined): string | null {
  if (newest === undefined) return null;
  const table = sourceInfo(FUNCTION_EDGE).alias;
  // Partitions holding the project up to the function's newest record, newest first.
  const parts = store.partitionsWithProject(FUNCTION_EDGE, project, Number.MIN_SAFE_INTEGER, newest).slice(0, PARTITIONS_PER_FUNCTION);
  for (const p of parts) {
    // The hot table is keyed (project, function, ts, rid): this reads its newest rows of the function.
    const rows = store
      .use(p)
      .rows(`SELECT blk, boff, len FROM ${table} WHERE project = ? AND function = ? ORDER BY ts DESC LIMIT ?`, [project, fn, RECORDS_PER_PARTITION]);
    for (const [blk, boff, len] of rows) {
      const slug = slugOfRecord(store.readRecord(p, { blk: blk as number, boff: boff as number, len: len as number }).toString('utf8'));
      if (slug !== null) return slug;
    }
  }
  return null;
}

/**
 * Slugs of some functions of a project (dictionary ids), null where no record names one.
 * Computed on first use and kept until the store's data changes.
 */
export function functionSlugs(store: LogStore, project: number, fns: readonly number[]): Map<number, string | null> {
  let cache = caches.get(store);
  if (!cache || cache.dataVersion !== store.dataVersion) caches.set(store, (cache = { dataVersion: store.dataVersion, slugs: new Map() }));
  const out = new Map<number, string | null>();
  let newest: Map<number, number> | undefined;
  for (const fn of fns) {
    const key = `${project}:${fn}`;
    let slug = cache.slugs.get(key);
    if (slug === undefined) {
      newest ??= newestOf(store, project);
      slug = deriveSlug(store, project, fn, newest.get(fn));
      cache.slugs.set(key, slug);
    }
    out.set(fn, slug);
  }
  return out;
}
