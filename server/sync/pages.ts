/**
 * How a sync walks a remote source, as pure functions (README, "Sync a live project"): the SQL of
 * each page, the windows the Management API accepts, and where each page leaves the cursor.
 *
 * Management API (`supabase` connections): keyset pages in time order. A page asks for at most
 * PAGE_ROWS rows after the cursor `(timestamp, id)` (or, from a cursor with no id, at or after its
 * instant: the first page, and the page after a window that was read to its end), within a
 * window of whole minutes of at most 24 hours that starts in the minute before the cursor and
 * ends at most at the last whole minute before now. A full page moves the cursor to its last row;
 * a shorter one (or an empty one) means the window holds nothing more, so the cursor moves to the
 * window's end. A window ending at now that is not full means the source is caught up.
 *
 * Logflare (`logflare` connections): `logs.all` answers the newest LOGFLARE_PAGE_ROWS rows of a
 * range (start exclusive, end inclusive), so a window is read newest first: each full page moves
 * the page's end to its oldest instant (inclusive: rows sharing it are read again, and deduped);
 * the cursor, an instant everything up to which is stored, moves to the window's end only when the
 * window is read to its oldest row. A full page whose rows all share one instant cannot go on that
 * way: it is reported and the rest of that instant skipped.
 */
import { formatIsoMicros, MICROS, truncMicros } from '../time.ts';

/** Rows a Management API page asks for (the platform's cap per answer). */
export const PAGE_ROWS = 1000;
/** The widest window the Management API accepts. */
export const MAX_WINDOW_US = 24 * MICROS.hour;
/** What each poll reads again: the platform ingests late. */
export const REREAD_US = 10 * MICROS.minute;
/** Rows of one `logs.all` answer. */
export const LOGFLARE_PAGE_ROWS = 100;
/** Logflare windows: the first one, and the bounds they adapt within (whole minutes). */
export const LOGFLARE_FIRST_WINDOW_US = 24 * MICROS.hour;
export const LOGFLARE_MIN_WINDOW_US = MICROS.minute;
export const LOGFLARE_MAX_WINDOW_US = 7 * 24 * MICROS.hour;

/**
 * Where a source's sync stands. `id` null: everything before `ts` is read (and, for the
 * Management API, nothing at `ts` yet). Logflare cursors never have an id: everything at or
 * before `ts` is read.
 */
export interface Cursor {
  ts: number;
  id: string | null;
}

/** Order of cursors: by instant, then no id before any id, then ids as the remote orders them (bytes). */
export function compareCursor(a: Cursor, b: Cursor): number {
  if (a.ts !== b.ts) return a.ts < b.ts ? -1 : 1;
  if (a.id === b.id) return 0;
  if (a.id === null) return -1;
  if (b.id === null) return 1;
  return Buffer.compare(Buffer.from(a.id, 'utf8'), Buffer.from(b.id, 'utf8'));
}

export function laterCursor(a: Cursor, b: Cursor): Cursor {
  return compareCursor(a, b) >= 0 ? a : b;
}

export function floorMinute(us: number): number {
  return truncMicros(us, MICROS.minute);
}

/** A string literal for both dialects: backslashes and quotes escaped with a backslash. */
export function sqlString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function micros(ts: number): string {
  if (!Number.isSafeInteger(ts)) throw new RangeError(`not an integer µs instant: ${ts}`);
  return String(ts);
}

/** The BigQuery-dialect page after `cursor` of one table (a source's alias). */
export function bigQueryPageSql(table: string, cursor: Cursor): string {
  const t = micros(cursor.ts);
  const where =
    cursor.id === null
      ? `timestamp >= timestamp_micros(${t})`
      : `timestamp > timestamp_micros(${t}) or (timestamp = timestamp_micros(${t}) and id > ${sqlString(cursor.id)})`;
  return `select id, timestamp, event_message, metadata from ${table} where ${where} order by timestamp asc, id asc limit ${PAGE_ROWS}`;
}

/** The ClickHouse-dialect page after `cursor` of one `source` of the `logs` table. */
export function clickHousePageSql(source: string, cursor: Cursor): string {
  const t = micros(cursor.ts);
  const where =
    cursor.id === null
      ? `timestamp >= fromUnixTimestamp64Micro(${t})`
      : `(timestamp > fromUnixTimestamp64Micro(${t}) or (timestamp = fromUnixTimestamp64Micro(${t}) and id > ${sqlString(cursor.id)}))`;
  return `select id, timestamp, event_message, severity_text, log_attributes from logs where source = ${sqlString(source)} and ${where} order by timestamp asc, id asc limit ${PAGE_ROWS}`;
}

export interface Window {
  /** µs, whole minutes. */
  start: number;
  end: number;
}

/**
 * The window of the next Management API page from `cursor`, or null when the cursor has
 * reached the last whole minute before `now` (caught up). It starts in the minute before the
 * cursor's instant, so a record at the cursor's instant is inside it whether the platform's
 * window includes its start or not.
 */
export function managementWindow(cursor: Cursor, now: number): Window | null {
  const end = floorMinute(now);
  if (cursor.ts >= end) return null;
  const start = floorMinute(cursor.ts - 1);
  return { start, end: Math.min(start + MAX_WINDOW_US, end) };
}

/** A window's ends as the platform takes them: ISO 8601 UTC, whole seconds. */
export function isoSeconds(us: number): string {
  return `${formatIsoMicros(us).slice(0, 19)}Z`;
}

export type PageOutcome = { next: Cursor; caughtUp: boolean } | { error: string };

/**
 * Where a Management API page leaves the cursor: at its last row when it is full, else at the
 * window's end. `keys` are the rows' (timestamp, id); `now` the instant the window was planned at.
 */
export function afterManagementPage(cursor: Cursor, window: Window, keys: readonly Cursor[], rows: number, now: number): PageOutcome {
  if (rows >= PAGE_ROWS) {
    let last: Cursor | undefined;
    for (const k of keys) if (!last || compareCursor(k, last) > 0) last = k;
    if (!last || compareCursor(last, cursor) <= 0) {
      return { error: `the remote answered a full page that does not go past ${formatIsoMicros(cursor.ts)}${cursor.id === null ? '' : ` (id ${cursor.id})`}; the sync cannot go on from there` };
    }
    return { next: last, caughtUp: false };
  }
  return { next: { ts: window.end, id: null }, caughtUp: window.end >= floorMinute(now) };
}

/** One Logflare window being read, newest first. */
export interface LogflareWindow {
  /** Exclusive start: the cursor. */
  from: number;
  /** Inclusive end of the window. */
  to: number;
  /** Inclusive end of the next page (starts at `to`, moves back). */
  pageEnd: number;
  /** Pages read so far. */
  pages: number;
  /** The window ends at now: reading it to its start catches the source up. */
  atNow: boolean;
}

/** The next Logflare window from `from`, `span` µs long at most, ending at `now` at the latest; null when caught up. */
export function logflareWindow(from: number, now: number, span: number): LogflareWindow | null {
  if (from >= now) return null;
  const to = Math.min(floorMinute(from) + span, now);
  const end = to > from ? to : now;
  return { from, to: end, pageEnd: end, pages: 0, atNow: end >= now };
}

export type LogflareOutcome =
  | { done: true; cursor: number; caughtUp: boolean; nextSpan: number; warning?: string }
  | { done: false; window: LogflareWindow; warning?: string };

/**
 * After one `logs.all` page of a window (`timestamps`: its rows' instants): the window is read
 * (the cursor moves to its end, the next window's span adapts to how many pages this one took)
 * or the next page's end.
 */
export function afterLogflarePage(w: LogflareWindow, timestamps: readonly number[], span: number): LogflareOutcome {
  const pages = w.pages + 1;
  const done = (warning?: string): LogflareOutcome => {
    // One page: the next window may be twice as long; many pages: half as long (a crash re-reads less).
    const nextSpan = pages === 1 ? Math.min(span * 2, LOGFLARE_MAX_WINDOW_US) : pages > 10 ? Math.max(floorMinute(span / 2), LOGFLARE_MIN_WINDOW_US) : span;
    return { done: true, cursor: w.to, caughtUp: w.atNow, nextSpan, ...(warning ? { warning } : {}) };
  };
  if (timestamps.length < LOGFLARE_PAGE_ROWS) return done();
  let oldest = Infinity;
  let newest = -Infinity;
  for (const t of timestamps) {
    if (t < oldest) oldest = t;
    if (t > newest) newest = t;
  }
  if (oldest === newest) {
    const warning = `${timestamps.length} or more records at ${formatIsoMicros(oldest)} (the most one answer of logs.all holds): the ones beyond the first ${timestamps.length} cannot be read through logs.all and were skipped`;
    const pageEnd = oldest - 1;
    if (pageEnd <= w.from) return done(warning);
    return { done: false, window: { ...w, pageEnd, pages }, warning };
  }
  if (oldest <= w.from) return done();
  return { done: false, window: { ...w, pageEnd: oldest, pages } };
}
