/**
 * The exact logs.all view's rows: paging older rows, and the request fields of an edge log
 * record in the query shape (`metadata[0].request[0].method`) with the filter box over them.
 */
import type { LogRow } from '../../../../../contract/api-types.ts';

/** Where paging older left off: the oldest instant shown and the ids shown at that instant. */
export interface OlderCursor {
  end: number;
  idsAtEnd: readonly string[];
}

/** The cursor after the rows shown so far (newest first); null when none are shown. */
export function olderCursor(shown: readonly LogRow[]): OlderCursor | null {
  const oldest = shown[shown.length - 1];
  if (!oldest) return null;
  const idsAtEnd: string[] = [];
  for (let i = shown.length - 1; i >= 0 && shown[i]!.timestamp === oldest.timestamp; i--) idsAtEnd.push(shown[i]!.id);
  return { end: oldest.timestamp, idsAtEnd };
}

export interface OlderPage {
  /** Up to `size` rows older than (or tied with, but not yet shown at) the cursor, newest first. */
  rows: LogRow[];
  /** Whether older rows may remain in the range. */
  more: boolean;
  /**
   * Instants whose records filled a whole answer: logs.all orders ties by id and returns at most
   * `size`, so records of that microsecond past the first `size` cannot be reached by paging.
   */
  crowded: number[];
}

/**
 * The next `size` rows of logs.all older than the cursor. The endpoint takes an inclusive end
 * and no offset, so asking with end = the oldest shown instant answers that row (and any ties
 * shown) again: they are dropped, and the request repeats from the new oldest instant until
 * `size` new rows are in hand or the range is exhausted. `fetchEnd(end)` asks logs.all with
 * iso_timestamp_end = end (the caller keeps the tier, start and project).
 */
export async function fetchOlder(fetchEnd: (end: number) => Promise<readonly LogRow[]>, cursor: OlderCursor, size: number): Promise<OlderPage> {
  const seen = new Set(cursor.idsAtEnd);
  const rows: LogRow[] = [];
  const crowded: number[] = [];
  let end = cursor.end;
  for (;;) {
    const answer = await fetchEnd(end);
    let added = 0;
    for (const r of answer) {
      if (seen.has(r.id)) continue;
      seen.add(r.id);
      rows.push(r);
      added++;
    }
    // A short answer is the rest of the range.
    if (answer.length < size) return { rows: rows.slice(0, size), more: rows.length > size, crowded };
    if (rows.length >= size) return { rows: rows.slice(0, size), more: true, crowded };
    const oldest = answer[answer.length - 1]!;
    if (oldest.timestamp === end && added === 0) {
      // A full answer of one microsecond, all shown already: step past it.
      crowded.push(end);
      end -= 1;
    } else {
      end = oldest.timestamp;
    }
  }
}

export interface RequestFields {
  method: string | null;
  path: string | null;
  status: number | null;
}

function first(value: unknown): Record<string, unknown> | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** method/path from metadata[0].request[0], status from metadata[0].response[0].status_code. */
export function requestFields(row: Pick<LogRow, 'metadata'>): RequestFields {
  const meta = first(row.metadata);
  const req = first(meta?.request);
  const res = first(meta?.response);
  const status = res?.status_code;
  const statusNum = typeof status === 'number' ? status : typeof status === 'string' && /^\d+$/.test(status) ? Number(status) : null;
  return {
    method: typeof req?.method === 'string' ? req.method : null,
    path: typeof req?.path === 'string' ? req.path : null,
    status: statusNum,
  };
}

/** Appends an older page, dropping rows already shown (the end bound is inclusive). */
export function mergePages(pages: ReadonlyArray<readonly LogRow[]>): LogRow[] {
  const seen = new Set<string>();
  const out: LogRow[] = [];
  for (const page of pages) {
    for (const row of page) {
      if (seen.has(row.id)) continue;
      seen.add(row.id);
      out.push(row);
    }
  }
  return out;
}

/** A message match this far in is past what a table cell shows. */
const VISIBLE_MESSAGE_CHARS = 60;

/**
 * Where the filter box matched, when the table would not show it: the id (not a column) or a
 * point far into the message. Null when the match is in sight (or nothing matched).
 */
export function hiddenMatch(row: LogRow, fields: RequestFields, filter: string): string | null {
  const q = filter.trim().toLowerCase();
  if (!q) return null;
  const visible =
    (fields.path ?? '').toLowerCase().includes(q) || (fields.method ?? '').toLowerCase() === q || String(fields.status ?? '') === q;
  if (visible) return null;
  const at = row.event_message.toLowerCase().indexOf(q);
  if (at >= 0) return at < VISIBLE_MESSAGE_CHARS ? null : `match at character ${at + 1} of the message`;
  return row.id.toLowerCase().includes(q) ? 'match in id' : null;
}

export function rowMatches(row: LogRow, fields: RequestFields, filter: string): boolean {
  const q = filter.trim().toLowerCase();
  if (!q) return true;
  return (
    row.event_message.toLowerCase().includes(q) ||
    row.id.toLowerCase().includes(q) ||
    (fields.path ?? '').toLowerCase().includes(q) ||
    (fields.method ?? '').toLowerCase() === q ||
    String(fields.status ?? '') === q
  );
}
