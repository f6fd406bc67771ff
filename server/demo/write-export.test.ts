import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toQueryShape, type Json } from '../store/shape.ts';
import { SOURCE_NAMES, type SourceName } from '../sources.ts';
import { generateRecords, type DemoRecord } from './generate.ts';
import {
  EXPORT_FORMATS,
  EXPORT_SHAPES,
  formatTimestamp,
  TIMESTAMP_FORMS,
  toNdjsonLine,
  writeExport,
  type ExportFormat,
  type ExportOptions,
  type TimestampForm,
} from './write-export.ts';

const NOW = Date.UTC(2026, 10, 22, 10, 0, 0) * 1000 + 123_456;
const EDGE: SourceName = 'cloudflare.logs.prod';
const FN_EDGE: SourceName = 'deno-relay-logs';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'demo-export-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const records = (source: SourceName, count: number, seed = 3) => [...generateRecords(source, { now: NOW, count, seed })];

/**
 * Reads a written timestamp back to microseconds, independently of the writer and of
 * server/time.ts: plain regexes and Date.UTC on whole seconds.
 */
function readTimestamp(token: string, form: TimestampForm): number {
  const isoBase = (y: string, mo: string, d: string, h: string, mi: string, s: string) =>
    Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)) * 1000;
  let m: RegExpExecArray | null;
  switch (form) {
    case 'micros':
      expect(token).toMatch(/^\d{16}$/);
      return Number(token);
    case 'millis':
      expect(token).toMatch(/^\d{13}$/);
      return Number(token) * 1000;
    case 'seconds':
      m = /^(\d{10})\.(\d{6})$/.exec(token);
      return Number(m![1]) * 1_000_000 + Number(m![2]);
    case 'iso':
      m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})Z$/.exec(token);
      return isoBase(m![1]!, m![2]!, m![3]!, m![4]!, m![5]!, m![6]!) + Number(m![7]);
    case 'iso-nanos':
      m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})\d{3}Z$/.exec(token);
      return isoBase(m![1]!, m![2]!, m![3]!, m![4]!, m![5]!, m![6]!) + Number(m![7]);
    case 'iso-offset': {
      m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})([+-])(\d{2}):(\d{2})$/.exec(token);
      const offsetMinutes = (m![8] === '-' ? -1 : 1) * (Number(m![9]) * 60 + Number(m![10]));
      return isoBase(m![1]!, m![2]!, m![3]!, m![4]!, m![5]!, m![6]!) + Number(m![7]) - offsetMinutes * 60_000_000;
    }
  }
}

/** What a form can carry: everything but `millis`, which keeps whole milliseconds (floored). */
const expectedMicros = (us: number, form: TimestampForm) => (form === 'millis' ? Math.floor(us / 1000) * 1000 : us);

interface ReadBack {
  id?: string;
  /** The timestamp exactly as it appears in the file. */
  token: string;
  event_message: string;
  metadata: Json;
  project?: string;
}

/** Parses a written file back with standard parsers (JSON.parse per line/document, csv-parse). */
function readBack(text: string, format: ExportFormat): ReadBack[] {
  const body = text.replace(/^\uFEFF/, '');
  if (format === 'csv') {
    const rows = parseCsv(body, { columns: true }) as Array<Record<string, string>>;
    return rows.map((row) => ({
      ...(row['id'] === undefined ? {} : { id: row['id'] }),
      token: row['timestamp']!,
      event_message: row['event_message']!,
      metadata: JSON.parse(row['metadata']!) as Json,
      ...(row['project'] === undefined ? {} : { project: row['project'] }),
    }));
  }
  let items: Array<Record<string, Json>>;
  if (format === 'ndjson') items = body.split(/\r?\n/).filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, Json>);
  else if (format === 'json-array') items = JSON.parse(body) as Array<Record<string, Json>>;
  else items = (JSON.parse(body) as { result: Array<Record<string, Json>> }).result;
  // JSON.parse turns `1795341499.388261` into a double: take the exact token from the text.
  const tokens = [...body.matchAll(/"timestamp":("?)([^",]+)\1,"event_message"/g)].map((m) => m[2]!);
  expect(tokens).toHaveLength(items.length);
  return items.map((item, i) => ({
    ...(item['id'] === undefined ? {} : { id: item['id'] as string }),
    token: tokens[i]!,
    event_message: item['event_message'] as string,
    metadata: item['metadata']!,
    ...(item['project'] === undefined ? {} : { project: item['project'] as string }),
  }));
}

async function roundTrip(recs: DemoRecord[], name: string, options: ExportOptions) {
  const path = join(dir, name);
  const result = await writeExport(path, recs, options);
  const buf = await readFile(path);
  expect(result.bytes).toBe(buf.length);
  expect(result.records).toBe(recs.length);
  return { text: buf.toString('utf8'), buf, back: readBack(buf.toString('utf8'), options.format) };
}

describe('writeExport: every format x shape x timestamp form parses back', () => {
  const edge = records(EDGE, 60);
  for (const format of EXPORT_FORMATS) {
    for (const shape of EXPORT_SHAPES) {
      for (const timestamp of TIMESTAMP_FORMS) {
        it(`${format} / ${shape} / ${timestamp}: same ids, timestamps (to the form's precision), messages, metadata`, async () => {
          const { back } = await roundTrip(edge, `edge.${format}.${shape}.${timestamp}`, { source: EDGE, format, shape, timestamp });
          expect(back.map((b) => b.id)).toEqual(edge.map((r) => r.id));
          expect(back.map((b) => readTimestamp(b.token, timestamp))).toEqual(edge.map((r) => expectedMicros(r.timestamp, timestamp)));
          expect(back.map((b) => b.event_message)).toEqual(edge.map((r) => r.event_message));
          expect(back.map((b) => b.project)).toEqual(edge.map((r) => r.project));
          const expected = edge.map((r) => (shape === 'query' ? toQueryShape(r.metadata) : r.metadata));
          expect(back.map((b) => b.metadata)).toEqual(expected);
        });
      }
    }
  }

  it('writes numeric forms as JSON numbers and ISO forms as strings', async () => {
    const recs = records(EDGE, 3);
    for (const timestamp of TIMESTAMP_FORMS) {
      const { text } = await roundTrip(recs, `types.${timestamp}.ndjson`, { source: EDGE, format: 'ndjson', timestamp });
      const first = JSON.parse(text.split('\n')[0]!) as { timestamp: unknown };
      expect(typeof first.timestamp).toBe(timestamp.startsWith('iso') ? 'string' : 'number');
      if (timestamp === 'seconds') expect(Math.abs((first.timestamp as number) * 1e6 - recs[0]!.timestamp)).toBeLessThan(1);
    }
  });
});

describe('writeExport: CSV', () => {
  it('has the Studio header, with a project column only for record-level projects', async () => {
    const edge = await roundTrip(records(EDGE, 5), 'h.edge.csv', { source: EDGE, format: 'csv' });
    expect(edge.text.split('\n')[0]).toBe('id,timestamp,event_message,metadata,project');
    const fn = await roundTrip(records(FN_EDGE, 5), 'h.fn.csv', { source: FN_EDGE, format: 'csv' });
    expect(fn.text.split('\n')[0]).toBe('id,timestamp,event_message,metadata');
    expect(fn.back.map((b) => b.project)).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  it('quotes cells per RFC 4180 (commas, quotes, line breaks) and reads back exact text', async () => {
    const tricky: DemoRecord = {
      id: 'a,b',
      timestamp: NOW,
      event_message: 'line one\nsaid "hi", then\r\nleft',
      metadata: { note: 'x,"y"\nz', nested: { k: [1, 'two'] } },
      project: 'ouwmmbchcsjxvtfobujc',
    };
    const { text, back } = await roundTrip([tricky], 'tricky.csv', { source: EDGE, format: 'csv' });
    expect(text).toContain('"line one\nsaid ""hi"", then\r\nleft"');
    expect(back[0]).toEqual({ id: 'a,b', token: String(NOW), event_message: tricky.event_message, metadata: tricky.metadata, project: tricky.project });
  });

  it('keeps multi-line event messages (stack traces) intact', async () => {
    const events = records('deno-subhosting-events', 400);
    expect(events.some((r) => r.event_message.slice(0, -1).includes('\n'))).toBe(true);
    const { back } = await roundTrip(events, 'events.csv', { source: 'deno-subhosting-events', format: 'csv' });
    expect(back.map((b) => b.event_message)).toEqual(events.map((r) => r.event_message));
  });
});

describe('writeExport: byte options', () => {
  it('bom: starts with EF BB BF and still parses', async () => {
    for (const format of EXPORT_FORMATS) {
      const { buf, back } = await roundTrip(records(EDGE, 4), `bom.${format}`, { source: EDGE, format, bom: true });
      expect([...buf.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
      expect(back).toHaveLength(4);
    }
  });

  it('crlf: every line break outside values is CRLF', async () => {
    for (const format of EXPORT_FORMATS) {
      const { text, back } = await roundTrip(records(EDGE, 4), `crlf.${format}`, { source: EDGE, format, crlf: true });
      expect(text.endsWith('\r\n')).toBe(true);
      expect(text.replace(/\r\n/g, '')).not.toContain('\n');
      expect(back).toHaveLength(4);
    }
  });

  it('omitIds: no id field or column, everything else unchanged', async () => {
    const recs = records(EDGE, 4);
    for (const format of EXPORT_FORMATS) {
      const { text, back } = await roundTrip(recs, `noid.${format}`, { source: EDGE, format, omitIds: true });
      expect(text).not.toContain('"id"');
      expect(back.map((b) => b.id)).toEqual([undefined, undefined, undefined, undefined]);
      expect(back.map((b) => b.event_message)).toEqual(recs.map((r) => r.event_message));
    }
    const { text } = await roundTrip(recs, 'noid.header.csv', { source: EDGE, format: 'csv', omitIds: true });
    expect(text.split('\n')[0]).toBe('timestamp,event_message,metadata,project');
  });
});

describe('writeExport: streaming and edge cases', () => {
  it('writes zero records as an empty file or an empty container', async () => {
    const expected: Record<ExportFormat, string> = {
      ndjson: '',
      'json-array': '[\n]\n',
      result: '{"result":[\n]}\n',
      csv: 'id,timestamp,event_message,metadata,project\n',
    };
    for (const format of EXPORT_FORMATS) {
      const path = join(dir, `empty.${format}`);
      expect(await writeExport(path, [], { source: EDGE, format })).toEqual({ path, records: 0, bytes: expected[format].length });
      expect(await readFile(path, 'utf8')).toBe(expected[format]);
    }
    expect(JSON.parse(expected['json-array'])).toEqual([]);
    expect(JSON.parse(expected.result)).toEqual({ result: [] });
  });

  it('accepts an async iterable and writes many chunks in order', async () => {
    const count = 3000; // ~5 MB: more than two 2 MiB buffers
    async function* source() {
      yield* generateRecords(EDGE, { now: NOW, count, seed: 9 });
    }
    const path = join(dir, 'async.ndjson');
    const result = await writeExport(path, source(), { source: EDGE, format: 'ndjson' });
    expect(result.records).toBe(count);
    expect(result.bytes).toBeGreaterThan(4 * 1024 * 1024);
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines).toHaveLength(count + 1);
    const ids = [...generateRecords(EDGE, { now: NOW, count, seed: 9 })].map((r) => r.id);
    expect(lines.slice(0, -1).map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(ids);
  });

  it('writes a record bigger than a buffer', async () => {
    const big: DemoRecord = { id: 'big', timestamp: NOW, event_message: 'é'.repeat(3_000_000), metadata: {} };
    const { back } = await roundTrip([records(EDGE, 1)[0]!, big, records(EDGE, 1)[0]!], 'big.ndjson', { source: EDGE, format: 'ndjson' });
    expect(back.map((b) => b.event_message.length)).toEqual([back[0]!.event_message.length, 3_000_000, back[0]!.event_message.length]);
  });

  it('escapes ids, messages and projects that need it in JSON forms', async () => {
    const odd: DemoRecord = { id: 'x"y\\z\n', timestamp: NOW, event_message: 'tab\there "q"', metadata: { a: '\u2028' }, project: 'p"1' };
    for (const format of ['ndjson', 'json-array', 'result'] as const) {
      const { back } = await roundTrip([odd], `odd.${format}`, { source: EDGE, format });
      expect(back[0]).toEqual({ id: odd.id, token: String(NOW), event_message: odd.event_message, metadata: odd.metadata, project: odd.project });
    }
  });

  it('serializes a copied (plain) metadata object the same as the generated one', async () => {
    const [r] = records(EDGE, 1);
    const copy: DemoRecord = { ...r!, metadata: JSON.parse(JSON.stringify(r!.metadata)) as DemoRecord['metadata'] };
    const a = await roundTrip([r!], 'orig.ndjson', { source: EDGE, format: 'ndjson' });
    const b = await roundTrip([copy], 'copy.ndjson', { source: EDGE, format: 'ndjson' });
    expect(b.text).toBe(a.text);
  });
});

describe('toNdjsonLine', () => {
  it('gives the same text as JSON.stringify(record) for every source', () => {
    for (const s of SOURCE_NAMES) {
      const recs = records(s, 200);
      expect(recs.filter((r) => toNdjsonLine(r) !== JSON.stringify(r)).slice(0, 1)).toEqual([]);
    }
  });
});

describe('formatTimestamp', () => {
  const us = Date.UTC(2026, 10, 22, 10, 0, 0) * 1000 + 123_456;
  it('writes each form as documented', () => {
    expect(formatTimestamp(us, 'micros')).toBe('1795341600123456');
    expect(formatTimestamp(us, 'millis')).toBe('1795341600123');
    expect(formatTimestamp(us, 'seconds')).toBe('1795341600.123456');
    expect(formatTimestamp(us, 'iso')).toBe('2026-11-22T10:00:00.123456Z');
    expect(formatTimestamp(us, 'iso-nanos')).toMatch(/^2026-11-22T10:00:00\.123456\d{3}Z$/);
    expect(formatTimestamp(us, 'iso-offset', 0)).toBe('2026-11-22T15:30:00.123456+05:30');
    expect(formatTimestamp(us, 'iso-offset', 1)).toBe('2026-11-22T02:00:00.123456-08:00');
    expect(formatTimestamp(us - 123_456, 'seconds')).toBe('1795341600.000000');
  });
});
