/**
 * The import's parser off the main thread: batches packed and unpacked without loss, the worker
 * and inline modes writing the same records with the same reports (and the same records as
 * reading and normalizing directly), flow control both ways, and a crashed worker or a failing
 * input failing the import cleanly.
 *
 * Most cases write into a recording stand-in for the store (its contract: withWriter, write,
 * markDenseDays, settle, commit when the work returns, rollback when it throws), so they check
 * exactly what reaches writer.write.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findSource, type SourceName } from '../sources.ts';
import { LogStore, type StoredRecord } from '../store/log-store.ts';
import { openRecordStream } from './formats.ts';
import { ImportFailure, importFile, importStream, type ImportOptions, type ImportReport } from './import.ts';
import { normalizeRecord } from './normalize.ts';
import { activeParseWorkers } from './parse-host.ts';
import { packBatch, unpackBatch } from './parse-protocol.ts';

const P = 'abcdefghijklmnopqrst';
const T0 = Date.UTC(2023, 2, 23, 14, 40, 18) * 1000 + 149_123;
const MODES = ['worker', 'inline'] as const;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-parse-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Records as plain data: raw as its text, whatever type it came as. */
const plain = (records: StoredRecord[]) =>
  records.map((r) => ({ ...r, raw: Buffer.isBuffer(r.raw) ? r.raw.toString('utf8') : r.raw }));

/** The store's contract, recorded: writes land (one commit) only if the work succeeds; ids dedupe. */
function recordingStore(opts: { onWrite?: (records: StoredRecord[]) => void } = {}) {
  const committed: Record<string, ReturnType<typeof plain>> = {};
  const seen = new Set<string>();
  let saves = 0;
  const store = {
    async withWriter<T>(source: SourceName, work: (w: { write(r: StoredRecord[], settle?: boolean): { imported: number; duplicates: number }; markDenseDays(r: StoredRecord[]): void; settle(): void; sliceEnd(r: readonly StoredRecord[], from: number, max: number): number }) => Promise<T>): Promise<T> {
      const mine: StoredRecord[] = [];
      const added: string[] = [];
      try {
        const result = await work({
          write(records) {
            opts.onWrite?.(records);
            let imported = 0;
            for (const r of records) {
              const key = `${source}\u0000${r.id}`;
              if (seen.has(key)) continue;
              seen.add(key);
              added.push(key);
              mine.push(r);
              imported++;
            }
            return { imported, duplicates: records.length - imported };
          },
          // How records are laid out in partitions, and when their rows go in, is the real store's affair.
          markDenseDays() {},
          settle() {},
          sliceEnd: (r, from, max) => Math.min(r.length, from + max),
        });
        // The real store commits (saves) when the work returns.
        saves++;
        (committed[source] ??= []).push(...plain(mine));
        return result;
      } catch (err) {
        for (const k of added) seen.delete(k);
        throw err;
      }
    },
  };
  return { store: store as unknown as LogStore, committed, saves: () => saves };
}

type Outcome = { report: ImportReport; records: Record<string, unknown>; progress: unknown } | { failure: string; type: string; records: Record<string, unknown> };

async function outcome(run: (store: LogStore, opts: ImportOptions) => Promise<ImportReport>, parser: 'worker' | 'inline'): Promise<Outcome> {
  const rec = recordingStore();
  let last: unknown;
  try {
    const report = await run(rec.store, { parser, onProgress: (p) => (last = p) });
    return { report, records: rec.committed, progress: last };
  } catch (err) {
    return { failure: (err as Error).message, type: (err as Error).constructor.name, records: rec.committed };
  }
}

const ndjson = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';
const edge = (i: number, extra: Record<string, unknown> = {}) => ({
  id: `e-${i}`,
  timestamp: T0 + i,
  project: P,
  event_message: `GET | 200 | /rest/v1/t${i % 7}`,
  metadata: { request: { url: `https://${P}.supabase.co/rest/v1/t${i % 7}`, path: `/rest/v1/t${i % 7}` }, response: { status_code: i % 11 === 0 ? 500 : 200 } },
  ...extra,
});
const fnEdge = (i: number) => ({
  id: `f-${i}`,
  timestamp: T0 + i,
  event_message: 'POST | 200 | hello',
  metadata: { project_ref: P, function_id: i % 3 ? 'fn-a' : 'fn-b', ...(i % 5 !== 1 ? { execution_time_ms: i / 8 } : {}), ...(i % 4 !== 2 ? { response: { status_code: 200 } } : {}) },
});

/** Every input shape the import takes, with good and bad records, as one body each; and how it ends. */
const CASES: Array<[label: string, body: Buffer, opts: ImportOptions, ends: 'imported' | RegExp]> = [
  ['NDJSON over several batches, with duplicates', Buffer.from(ndjson(Array.from({ length: 5200 }, (_, i) => edge(i % 5000)))), { source: 'edge_logs' }, 'imported'],
  [
    'NDJSON with BOM, CRLF, blank, bad, NUL and truncated lines',
    Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from([JSON.stringify(edge(1)), '', '{"id": oops}', JSON.stringify(edge(2, { id: 'nul\u0000id' })), JSON.stringify(edge(3)), '  ', JSON.stringify(edge(4)).slice(0, 30)].join('\r\n')),
    ]),
    { source: 'edge_logs' },
    'imported',
  ],
  ['NDJSON with invalid UTF-8', Buffer.concat([Buffer.from(JSON.stringify(edge(1)) + '\n'), Buffer.from([0x7b, 0xe9, 0x7d, 0x0a]), Buffer.from(JSON.stringify(edge(2)) + '\n')]), { source: 'edge_logs' }, 'imported'],
  ['more rejections than the error list holds', Buffer.from(ndjson([...Array.from({ length: 1500 }, (_, i) => ({ id: `bad${i}`, project: P })), edge(9)])), { source: 'edge_logs' }, 'imported'],
  ['function edge records, source told by shape', Buffer.from(ndjson(Array.from({ length: 2500 }, (_, i) => fnEdge(i)))), {}, 'imported'],
  ['function edge records by file name, project option', Buffer.from(ndjson([{ timestamp: T0, event_message: 'x', metadata: { function_id: 'fn' } }])), { fileName: 'function_edge_logs.ndjson', project: P }, 'imported'],
  ['JSON array with bad elements and a cut', Buffer.from(`[${JSON.stringify(edge(1))},42,${JSON.stringify({ project: P })},${JSON.stringify(edge(2))},{"id":"c","time`), { source: 'edge_logs' }, 'imported'],
  ['{"result": [...]} pretty-printed', Buffer.from(JSON.stringify({ result: Array.from({ length: 1200 }, (_, i) => edge(i)) }, null, 2)), {}, 'imported'],
  ['an empty {"result": []}', Buffer.from('{"result": []}'), { source: 'edge_logs' }, 'imported'],
  [
    'CSV in Windows-1252 with a bad row',
    Buffer.concat([
      Buffer.from(`id,timestamp,project,event_message,metadata\r\na,${T0},${P},ok,\r\n`),
      Buffer.from(`b,${T0},${P},caf\u00e9 \u0080,\r\nc,${T0}\r\n`, 'latin1'),
      Buffer.from(`d,${T0},${P},"x, ""y""","{""request"":{""path"":""/auth/v1/token""}}"\r\n`),
    ]),
    { source: 'edge_logs' },
    'imported',
  ],
  ['postgres records (no hot fields)', Buffer.from(ndjson([{ id: 'p', timestamp: T0, project: P, event_message: 'x', metadata: { parsed: { error_severity: 'LOG' } } }])), {}, 'imported'],
  ['an unknown format', Buffer.from('hello world\n'), { source: 'edge_logs' }, /^unknown format/],
  ['an empty body', Buffer.from('  \n'), { source: 'edge_logs' }, /^the file is empty$/],
  ['a source that cannot be told', Buffer.from(ndjson([{ timestamp: T0, project: P, event_message: 'x' }])), {}, /^cannot tell the source/],
  ['an empty JSON array with no name', Buffer.from('[]'), {}, /^cannot tell the source/],
];

/** The input in pieces of 1..97 bytes, a different cut every time. */
function* pieces(body: Buffer, seed: number): Generator<Buffer> {
  let s = seed;
  for (let at = 0; at < body.length; ) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const n = 1 + (s % 97);
    yield body.subarray(at, at + n);
    at += n;
  }
}

describe('worker and inline imports write the same records with the same reports', () => {
  for (const [label, body, opts, ends] of CASES) {
    it(label, async () => {
      const whole = await Promise.all(MODES.map((parser) => outcome((store, o) => importStream(store, [body], { ...opts, ...o }), parser)));
      const cut = await Promise.all(MODES.map((parser, i) => outcome((store, o) => importStream(store, pieces(body, i + 1), { ...opts, ...o }), parser)));
      const file = path.join(dir, `${label.replace(/\W+/g, '_')}-${opts.fileName ?? 'input'}`);
      fs.writeFileSync(file, body);
      const fromFile = await Promise.all(MODES.map((parser) => outcome((store, o) => importFile(store, file, { ...opts, ...o }), parser)));
      if (ends === 'imported') expect(whole[0]).toMatchObject({ report: { imported: expect.any(Number) } });
      else expect(whole[0]).toMatchObject({ failure: expect.stringMatching(ends), type: 'ImportFailure', records: {} });
      expect(whole[0]).toEqual(whole[1]);
      expect(cut[0]).toEqual(whole[0]);
      expect(cut[1]).toEqual(whole[0]);
      // From a file: the same, with the file's name in the report.
      for (const r of fromFile) {
        if ('report' in r) expect({ ...r, report: { ...r.report, file: undefined } }).toEqual({ ...whole[0], report: { ...(whole[0] as { report: ImportReport }).report, file: undefined } });
        else expect(r).toEqual(whole[0]);
      }
    });
  }

  it('the records are those that reading and normalizing give directly', async () => {
    const [, body] = CASES.find(([label]) => label.includes('told by shape'))!;
    const info = findSource('function_edge_logs')!;
    const direct: StoredRecord[] = [];
    const stream = await openRecordStream((async function* () { yield body; })());
    for await (const items of stream.items) {
      for (const item of items) {
        const n = normalizeRecord(item.value, info, undefined, item.fromCsv, item.raw);
        if ('record' in n) direct.push(n.record);
      }
    }
    for (const parser of MODES) {
      const got = await outcome((store, o) => importStream(store, [body], o), parser);
      expect(got.records).toEqual({ 'deno-relay-logs': plain(direct) });
    }
  });

  it('progress ends with every byte and record, and comes after each written batch', async () => {
    const body = Buffer.from(ndjson(Array.from({ length: 4500 }, (_, i) => edge(i))));
    for (const parser of MODES) {
      const seen: Array<{ bytes: number; records: number }> = [];
      const rec = recordingStore();
      await importStream(rec.store, pieces(body, 7), { source: 'edge_logs', parser, onProgress: (p) => seen.push(p) });
      expect(seen.length).toBeGreaterThanOrEqual(3);
      expect(seen.at(-1)).toEqual({ bytes: body.length, records: 4500 });
      expect(seen.map((s) => s.records)).toEqual([...seen.map((s) => s.records)].sort((a, b) => a - b));
      expect(rec.saves()).toBe(1);
    }
  });
});

describe('packed batches', () => {
  it('round-trip every field exactly: absent, null, text, numbers, and raw as Buffer views of one buffer', () => {
    const records = [
      { id: 'a', ts: T0, project: P, raw: Buffer.from('{"x":"é"}'), url: 'https://x/rest', families: 1, status: 200 },
      { id: 'b', ts: T0 + 1.5, project: P, raw: '{"y":"\u{1F600}"}', url: '', families: 0, status: null },
      { id: 'c', ts: -1, project: 'other', raw: Buffer.alloc(0), functionId: null, exec: 12.25, status: 503 },
      { id: 'd', ts: 0, project: P, raw: 'plain', functionId: 'fn', exec: null },
    ] as StoredRecord[];
    const { batch, transfer } = packBatch(records);
    expect(transfer).toHaveLength(1);
    // As postMessage delivers it: cloned, the raw bytes moved rather than copied.
    const got = unpackBatch(structuredClone(batch, { transfer }));
    expect(plain(got)).toEqual(plain(records));
    for (const [i, r] of got.entries()) {
      expect(Buffer.isBuffer(r.raw)).toBe(true);
      expect(Object.keys(r).sort()).toEqual(Object.keys(records[i]!).sort());
    }
    expect(new Set(got.map((r) => (r.raw as Buffer).buffer)).size).toBe(1);
  });

  it('fields it does not know, or values of another type, travel as they are', () => {
    const records = [
      { id: 'a', ts: 1, project: P, raw: 'r', status: 200, method: 'GET', tags: ['x'] },
      { id: 'b', ts: 2, project: P, raw: 'r', status: '404', method: null, flag: true },
      { id: 3, ts: 3, project: P, raw: 'r' },
    ] as unknown as StoredRecord[];
    const { batch, transfer } = packBatch(records);
    const got = unpackBatch(structuredClone(batch, { transfer }));
    expect(plain(got)).toEqual(plain(records));
  });
});

describe('flow control', () => {
  /** A store that takes 2 ms per batch: the input must wait for it, not pile up. */
  const slowStore = () =>
    recordingStore({
      onWrite: () => {
        const until = performance.now() + 2;
        while (performance.now() < until);
      },
    });

  /** Generated input, counting the bytes the import has pulled from it. */
  function counted(head: string, line: (i: number) => string, sep: string, tail: string, total: number) {
    const state = { pulled: 0, records: 0 };
    async function* input() {
      let parts: string[] = [head];
      let size = head.length;
      for (let i = 0; size < total; i++) {
        const l = (i ? sep : '') + line(i);
        parts.push(l);
        size += l.length;
        state.records++;
        if (parts.length === 64) {
          const chunk = Buffer.from(parts.join(''));
          state.pulled += chunk.length;
          yield chunk;
          parts = [];
        }
      }
      parts.push(tail);
      const chunk = Buffer.from(parts.join(''));
      state.pulled += chunk.length;
      yield chunk;
    }
    return { input: input(), state };
  }

  const pad = 'x'.repeat(900);
  const FORMATS = [
    ['NDJSON', '', (i: number) => JSON.stringify(edge(i, { event_message: pad })), '\n', '\n', 40],
    ['CSV', 'id,timestamp,project,event_message\n', (i: number) => `c${i},${T0 + i},${P},${pad}`, '\n', '\n', 12],
    ['a JSON array', '[', (i: number) => JSON.stringify(edge(i, { event_message: pad })), ',', ']', 12],
  ] as const;

  for (const [label, head, line, sep, tail, mib] of FORMATS) {
    for (const parser of MODES) {
      it(`${parser}, ${label}: the parser runs a bounded window of input and a few batches ahead of the inserts`, async () => {
        const { input, state } = counted(head, line, sep, tail, mib * 1024 * 1024);
        let maxAhead = 0;
        const report = await importStream(slowStore().store, input, {
          source: 'edge_logs',
          parser,
          onProgress: (p) => (maxAhead = Math.max(maxAhead, state.pulled - p.bytes)),
        });
        expect(report).toMatchObject({ imported: state.records, rejected: 0 });
        // 8 MiB forwarded but not taken, 3 batches of about 1 MiB, 1 MiB gathering, a chunk;
        // the CSV and JSON readers also read ahead on their own.
        expect(maxAhead).toBeLessThan(label === 'NDJSON' ? 20 * 1024 * 1024 : 36 * 1024 * 1024);
      });
    }
  }
});

describe('failures', () => {
  const many = Buffer.from(ndjson(Array.from({ length: 6000 }, (_, i) => edge(i))));

  /** An input that gives its first part, then waits for `go` before the rest. */
  function gated(first: Buffer, rest: Buffer) {
    let go!: () => void;
    const gate = new Promise<void>((resolve) => (go = resolve));
    async function* input() {
      yield first;
      await gate;
      yield rest;
    }
    return { input: input(), go };
  }

  for (const how of ['throws', 'is terminated'] as const) {
    it(`a worker that ${how} mid-import fails it with a message, rolled back, and the next import works`, async () => {
      const store = await LogStore.open(path.join(dir, `crash-${how.replace(' ', '-')}`));
      try {
        const { input, go } = gated(many.subarray(0, many.length / 2), many.subarray(many.length / 2));
        let wrote!: () => void;
        const written = new Promise<void>((resolve) => (wrote = resolve));
        const running = importStream(store, input, { source: 'edge_logs', parser: 'worker', onProgress: () => wrote() });
        await written;
        const workers = [...activeParseWorkers()];
        expect(workers).toHaveLength(1);
        if (how === 'throws') workers[0]!.postMessage({ type: 'not-a-job' });
        else void workers[0]!.terminate();
        await expect(running).rejects.toThrow(how === 'throws' ? /^the import parse worker failed: parse worker: unexpected message "not-a-job"$/ : /^the import parse worker stopped \(exit code 1\)$/);
        go();
        expect(store.summary().find((s) => s.source === 'cloudflare.logs.prod')?.count ?? 0).toBe(0);
        expect(await importStream(store, [many], { source: 'edge_logs', parser: 'worker' })).toMatchObject({ imported: 6000 });
      } finally {
        await store.close();
      }
    });
  }

  for (const parser of MODES) {
    it(`${parser}: the input's own error fails the import with that error, rolled back; before any record, an ImportFailure`, async () => {
      const boom = new Error('socket hang up');
      const rec = recordingStore();
      const late = (async function* () {
        yield many;
        throw boom;
      })();
      await expect(importStream(rec.store, late, { source: 'edge_logs', parser })).rejects.toBe(boom);
      expect(rec.committed).toEqual({});
      const early = (async function* () {
        yield Buffer.from('{"id":');
        throw boom;
      })();
      const failure = importStream(rec.store, early, { source: 'edge_logs', parser });
      await expect(failure).rejects.toBeInstanceOf(ImportFailure);
      await expect(importStream(rec.store, (async function* () { yield Buffer.from('{"id":'); throw boom; })(), { source: 'edge_logs', parser })).rejects.toThrow(
        'cannot read the file: socket hang up',
      );
    });

    it(`${parser}: a failing insert fails the import, stops the parser and leaves nothing`, async () => {
      const rec = recordingStore({
        onWrite: () => {
          throw new Error('disk full');
        },
      });
      await expect(importStream(rec.store, [many], { source: 'edge_logs', parser })).rejects.toThrow('disk full');
      expect(rec.committed).toEqual({});
      // The parser is free for the next import.
      expect(await importStream(recordingStore().store, [many], { source: 'edge_logs', parser })).toMatchObject({ imported: 6000 });
    });
  }

  it('an unreadable file is an ImportFailure naming why, in both modes', async () => {
    for (const parser of MODES) {
      await expect(importFile(recordingStore().store, dir, { source: 'edge_logs', parser })).rejects.toThrow(/^cannot read the file: EISDIR/);
    }
  });
});
