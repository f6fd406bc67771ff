/**
 * Every export format × both metadata shapes × every timestamp form, through a real import:
 * the stored timestamp, hot fields and full record must be the same whichever way they came.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogStore } from '../store/log-store.ts';
import { importStream } from './import.ts';
import { canonicalRecord } from './normalize.ts';
import { sourceInfo } from '../sources.ts';

// 2023-03-23T14:40:18Z; the fraction is added by hand per form.
const BASE_MS = Date.UTC(2023, 2, 23, 14, 40, 18);
const US = BASE_MS * 1000 + 149_123;
const US_MS = BASE_MS * 1000 + 149_000;

const TIMESTAMPS: Array<[label: string, value: number | string, expected: number]> = [
  ['16-digit µs number', 1679582418149123, US],
  ['13-digit ms number', 1679582418149, US_MS],
  ['10-digit seconds number with a 6-digit fraction', 1679582418.149123, US],
  ['16-digit µs digit string', '1679582418149123', US],
  ['13-digit ms digit string', '1679582418149', US_MS],
  ['10-digit seconds digit string with a 6-digit fraction', '1679582418.149123', US],
  ['ISO with Z', '2023-03-23T14:40:18.149123Z', US],
  ['ISO with 9 fraction digits (truncated to µs)', '2023-03-23T14:40:18.149123999Z', US],
  ['ISO with +05:30 offset', '2023-03-23T20:10:18.149123+05:30', US],
  ['postgres style "… UTC"', '2023-03-23 14:40:18.149 UTC', US_MS],
];

const URL_ = 'https://abcdefghijklmnopqrst.supabase.co/rest/v1/todos?select=id,title';
const INGEST_META = {
  request: { method: 'GET', url: URL_, path: '/rest/v1/todos', headers: { user_agent: 'curl/8.0, "quoted"' } },
  response: { status_code: 201 },
};
const QUERY_META = [
  {
    request: [{ method: 'GET', url: URL_, path: '/rest/v1/todos', headers: [{ user_agent: 'curl/8.0, "quoted"' }] }],
    response: [{ status_code: 201 }],
  },
];
const SHAPES: Array<[label: string, metadata: unknown]> = [
  ['ingest shape', INGEST_META],
  ['query shape', QUERY_META],
];

const MESSAGE = 'GET | 201 | "todos", page 1';
const record = (timestamp: number | string, metadata: unknown) => ({
  id: 'rec-1',
  timestamp,
  project: 'abcdefghijklmnopqrst',
  event_message: MESSAGE,
  metadata,
});

/** RFC 4180: a cell with a comma, quote or line break is quoted, quotes doubled. */
const csvCell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

type Rec = ReturnType<typeof record>;
const FORMATS: Array<[label: string, reported: string, write: (r: Rec) => string]> = [
  ['NDJSON', 'ndjson', (r) => `${JSON.stringify(r)}\n`],
  ['JSON array', 'json-array', (r) => JSON.stringify([r])],
  ['{"result": [...]}', 'result', (r) => JSON.stringify({ result: [r] })],
  ['pretty-printed {"result": [...]}', 'result', (r) => `${JSON.stringify({ result: [r] }, null, 2)}\n`],
  [
    'Studio CSV',
    'csv',
    (r) =>
      'id,timestamp,project,event_message,metadata\r\n' +
      [r.id, String(r.timestamp), r.project, r.event_message, JSON.stringify(r.metadata)].map(csvCell).join(',') +
      '\r\n',
  ],
];

for (const [formatLabel, reported, write] of FORMATS) {
  describe(formatLabel, () => {
    for (const [shapeLabel, metadata] of SHAPES) {
      for (const [tsLabel, tsValue, expected] of TIMESTAMPS) {
        it(`${shapeLabel}, ${tsLabel}: stored timestamp ${expected} µs, metadata in the query shape`, async () => {
          const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-matrix-'));
          const store = await LogStore.open(dir);
          try {
            const body = Buffer.from(write(record(tsValue, metadata)));
            const report = await importStream(store, [body], { source: 'edge_logs' });
            expect(report).toEqual({
              source: 'cloudflare.logs.prod',
              format: reported,
              imported: 1,
              duplicates: 0,
              rejected: 0,
              sources: { 'cloudflare.logs.prod': { imported: 1, duplicates: 0, rejected: 0 } },
              errors: [],
              errorsOmitted: 0,
            });
            const rows = store.dump('cloudflare.logs.prod');
            expect(rows.map(({ ts, project, url, families, status }) => ({ ts, project, url, families, status }))).toEqual([
              { ts: expected, project: 'abcdefghijklmnopqrst', url: URL_, families: 1, status: 201 },
            ]);
            const full: unknown = JSON.parse(canonicalRecord(rows[0]!.raw, sourceInfo('cloudflare.logs.prod'), rows[0]!.project));
            expect(full).toEqual({
              id: 'rec-1',
              timestamp: expected,
              project: 'abcdefghijklmnopqrst',
              event_message: MESSAGE,
              metadata: QUERY_META,
            });
          } finally {
            await store.close();
            fs.rmSync(dir, { recursive: true, force: true });
          }
        });
      }
    }
  });
}
