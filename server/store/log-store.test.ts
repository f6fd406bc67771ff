/**
 * The store's lifecycle: save, close, reopen; failed and aborted imports leave it as it was;
 * crash leftovers (segment tails, temp files) are repaired at open; deleting a source.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ImportFailure, importFile, importStream } from '../ingest/import.ts';
import { LogStore, STORE_FILE, type SourceSummary } from './log-store.ts';

// 2023-03-23T14:40:18.149123Z, plus whole seconds.
const T0 = Date.UTC(2023, 2, 23, 14, 40, 18) * 1000 + 149_123;
const SEC = 1_000_000;
const PA = 'projaaaaaaaaaaaaaaaa';
const PB = 'projbbbbbbbbbbbbbbbb';

const dirs: string[] = [];
const openStores = new Set<LogStore>();

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'le-store-'));
  dirs.push(dir);
  return dir;
}

async function open(dir: string): Promise<LogStore> {
  const store = await LogStore.open(dir);
  openStores.add(store);
  return store;
}

async function close(store: LogStore): Promise<void> {
  openStores.delete(store);
  await store.close();
}

afterEach(async () => {
  for (const s of openStores) await s.close();
  openStores.clear();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const ndjson = (...records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';
const run = (store: LogStore, body: string, source: string) => importStream(store, [Buffer.from(body)], { source });

const edge = (id: string, ts: number, project = PA) => ({
  id,
  timestamp: ts,
  project,
  event_message: `GET | 200 | ${id}`,
  metadata: { request: { url: `https://${project}.supabase.co/rest/v1/t`, path: '/rest/v1/t' }, response: { status_code: 200 } },
});
const fn = (id: string, ts: number, functionId: string, project = PA) => ({
  id,
  timestamp: ts,
  event_message: 'POST | 200',
  metadata: { project_ref: project, function_id: functionId, execution_time_ms: 10, response: { status_code: 200 } },
});

const EDGE = ndjson(edge('e1', T0, PA), edge('e2', T0 + 5 * SEC, PB), edge('e3', T0 + 2 * SEC, PA));
const FN = ndjson(fn('f1', T0 + SEC, 'fn-a'), fn('f2', T0 + 3 * SEC, 'fn-a'), fn('f3', T0 + 4 * SEC, 'fn-b', PB));
const PG = ndjson({ id: 'p1', timestamp: T0, project: PB, event_message: 'checkpoint', metadata: { parsed: { error_severity: 'LOG' } } });

async function seeded(dir: string): Promise<LogStore> {
  const store = await open(dir);
  await run(store, EDGE, 'edge_logs');
  await run(store, FN, 'function_edge_logs');
  await run(store, PG, 'postgres_logs');
  return store;
}

const bySource = (store: LogStore, alias: string): SourceSummary => {
  const s = store.summary().find((x) => x.alias === alias);
  if (!s) throw new Error(`no summary for ${alias}`);
  return s;
};

const records = (store: LogStore, table: string, source: Parameters<LogStore['readRecord']>[0]) =>
  store.db.query<{ off: number; len: number }>(`SELECT off, len FROM ${table} ORDER BY rid`).map((r) => store.readRecord(source, r.off, r.len));

const counts = (store: LogStore) => Object.fromEntries(store.summary().map((s) => [s.alias, s.count]));
const segmentFile = (dir: string, alias: string) => path.join(dir, 'records', `${alias}.ndjson`);
const segmentSize = (dir: string, alias: string) => fs.statSync(segmentFile(dir, alias)).size;

/** Byte length of the NDJSON lines the store writes for these records. */
const linesBytes = (lines: string[]) => lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);

describe('summary', () => {
  it('counts, time span, projects by count and function ids per source, computed by hand', async () => {
    const store = await seeded(tempDir());
    expect(bySource(store, 'edge_logs')).toEqual({
      source: 'cloudflare.logs.prod',
      alias: 'edge_logs',
      count: 3,
      minTimestamp: T0,
      maxTimestamp: T0 + 5 * SEC,
      projects: [
        { ref: PA, count: 2 },
        { ref: PB, count: 1 },
      ],
      functionIds: [],
    });
    const f = bySource(store, 'function_edge_logs');
    expect(f).toMatchObject({ count: 3, minTimestamp: T0 + SEC, maxTimestamp: T0 + 4 * SEC, projects: [{ ref: PA, count: 2 }, { ref: PB, count: 1 }] });
    expect(f.functionIds).toEqual([
      { functionId: 'fn-a', project: PA, count: 2 },
      { functionId: 'fn-b', project: PB, count: 1 },
    ]);
    expect(bySource(store, 'postgres_logs')).toMatchObject({ count: 1, minTimestamp: T0, maxTimestamp: T0, projects: [{ ref: PB, count: 1 }] });
    expect(bySource(store, 'auth_logs')).toEqual({
      source: 'gotrue.logs.prod',
      alias: 'auth_logs',
      count: 0,
      minTimestamp: null,
      maxTimestamp: null,
      projects: [],
      functionIds: [],
    });
  });
});

describe('summary across imports', () => {
  it('a later import widens the time span both ways and adds to the counts', async () => {
    const store = await open(tempDir());
    await run(store, ndjson(edge('a', T0 + 5 * SEC)), 'edge_logs');
    await run(store, ndjson(edge('b', T0), edge('c', T0 + 10 * SEC, PB), edge('a', T0 + 5 * SEC)), 'edge_logs');
    expect(bySource(store, 'edge_logs')).toMatchObject({
      count: 3,
      minTimestamp: T0,
      maxTimestamp: T0 + 10 * SEC,
      projects: [
        { ref: PA, count: 2 },
        { ref: PB, count: 1 },
      ],
    });
  });
});

describe('save, close, reopen', () => {
  it('a reopened store has the same counts, summary and records', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const summary = store.summary();
    const edgeRecords = records(store, 'edge_logs', 'cloudflare.logs.prod');
    const fnRecords = records(store, 'function_edge_logs', 'deno-relay-logs');
    await close(store);

    const again = await open(dir);
    expect(again.summary()).toEqual(summary);
    expect(counts(again)).toMatchObject({ edge_logs: 3, function_edge_logs: 3, postgres_logs: 1 });
    expect(records(again, 'edge_logs', 'cloudflare.logs.prod')).toEqual(edgeRecords);
    expect(records(again, 'function_edge_logs', 'deno-relay-logs')).toEqual(fnRecords);
    expect(JSON.parse(edgeRecords[1]!)).toMatchObject({ id: 'e2', timestamp: T0 + 5 * SEC, project: PB });
  });

  it('a reopened store still dedupes: importing the same files again imports 0', async () => {
    const dir = tempDir();
    await close(await seeded(dir));
    const again = await open(dir);
    expect(await run(again, EDGE, 'edge_logs')).toMatchObject({ imported: 0, duplicates: 3 });
    expect(await run(again, FN, 'function_edge_logs')).toMatchObject({ imported: 0, duplicates: 3 });
    expect(counts(again)).toMatchObject({ edge_logs: 3, function_edge_logs: 3 });
  });

  it('segments stay valid NDJSON across reopen and later imports (each record on its own line)', async () => {
    const dir = tempDir();
    const store = await open(dir);
    await run(store, ndjson(edge('a', T0)), 'edge_logs');
    await close(store);
    const again = await open(dir);
    await run(again, ndjson(edge('b', T0 + SEC)), 'edge_logs');
    const stored = records(again, 'edge_logs', 'cloudflare.logs.prod');
    await close(again);
    const text = fs.readFileSync(segmentFile(dir, 'edge_logs'), 'utf8');
    expect(text).toBe(`${stored[0]}\n${stored[1]}\n`);
    expect(text.trimEnd().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['a', 'b']);
  });

  it('new records imported after reopen are readable and the old ones unchanged', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const before = records(store, 'edge_logs', 'cloudflare.logs.prod');
    await close(store);
    const again = await open(dir);
    expect(await run(again, ndjson(edge('e4', T0 + 9 * SEC)), 'edge_logs')).toMatchObject({ imported: 1 });
    const after = records(again, 'edge_logs', 'cloudflare.logs.prod');
    expect(after.slice(0, 3)).toEqual(before);
    expect(JSON.parse(after[3]!)).toMatchObject({ id: 'e4', timestamp: T0 + 9 * SEC });
  });
});

describe('failed imports leave the data intact', () => {
  async function expectUnchanged(dir: string, store: LogStore, attempt: () => Promise<unknown>) {
    const summary = store.summary();
    const size = segmentSize(dir, 'edge_logs');
    await expect(attempt()).rejects.toBeInstanceOf(ImportFailure);
    expect(store.summary()).toEqual(summary);
    expect(segmentSize(dir, 'edge_logs')).toBe(size);
  }

  it('a file of unknown format: ImportFailure "unknown format"', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const file = path.join(tempDir(), 'edge_logs.txt');
    fs.writeFileSync(file, 'this is not a log export\nat all\n');
    await expectUnchanged(dir, store, () => importFile(store, file));
    await expect(importFile(store, file)).rejects.toThrow(/^unknown format/);
  });

  it('an unreadable path: ImportFailure "cannot read <path>: ENOENT"', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const file = path.join(tempDir(), 'missing_edge_logs.ndjson');
    await expectUnchanged(dir, store, () => importFile(store, file));
    await expect(importFile(store, file)).rejects.toThrow(`cannot read ${file}: ENOENT`);
  });

  it('a directory instead of a file: ImportFailure "cannot read the file"', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const sub = path.join(tempDir(), 'edge_logs');
    fs.mkdirSync(sub);
    await expectUnchanged(dir, store, () => importFile(store, sub));
    await expect(importFile(store, sub)).rejects.toThrow(/^cannot read the file: .*EISDIR/);
  });

  it('an empty file: ImportFailure "the file is empty"', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const file = path.join(tempDir(), 'edge_logs.ndjson');
    fs.writeFileSync(file, '');
    await expectUnchanged(dir, store, () => importFile(store, file));
    await expect(importFile(store, file)).rejects.toThrow('the file is empty');
  });

  it('failed file imports do not leak file descriptors', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const file = path.join(tempDir(), 'edge_logs.txt');
    fs.writeFileSync(file, 'this is not a log export\nat all\n');
    const fds = () => fs.readdirSync('/proc/self/fd').length;
    const before = fds();
    for (let i = 0; i < 5; i++) await importFile(store, file).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 20));
    expect(fds()).toBe(before);
  });
});

describe('an input stream that errors midway', () => {
  const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => edge(`${prefix}${i}`, T0 + i));

  // 2500 records is more than one insert batch (2000): rows were already committed when it fails.
  const inputs: Array<[label: string, make: () => AsyncGenerator<Buffer>]> = [
    [
      'NDJSON',
      async function* () {
        yield Buffer.from(ndjson(...many(1500, 'x')));
        yield Buffer.from(ndjson(...many(1000, 'y')));
        throw new Error('disk went away');
      },
    ],
    [
      'JSON array',
      async function* () {
        yield Buffer.from(`[${many(1500, 'x').map((r) => JSON.stringify(r)).join(',\n')},\n`);
        yield Buffer.from(`${many(1000, 'y').map((r) => JSON.stringify(r)).join(',\n')},\n`);
        throw new Error('disk went away');
      },
    ],
    [
      'CSV',
      async function* () {
        const rows = (rs: ReturnType<typeof edge>[]) => rs.map((r) => `${r.id},${r.timestamp},${r.project}\n`).join('');
        yield Buffer.from(`id,timestamp,project\n${rows(many(1500, 'x'))}`);
        yield Buffer.from(rows(many(1000, 'y')));
        throw new Error('disk went away');
      },
    ],
  ];

  for (const [label, make] of inputs) {
    it(`${label}: the import throws and the store is exactly as before (counts, summary, segment size); it reopens`, async () => {
      const dir = tempDir();
      const store = await seeded(dir);
      const summary = store.summary();
      const size = segmentSize(dir, 'edge_logs');
      const rows = store.db.query('SELECT * FROM edge_logs ORDER BY rid');

      await expect(importStream(store, make(), { source: 'edge_logs' })).rejects.toThrow('disk went away');

      expect(store.summary()).toEqual(summary);
      expect(segmentSize(dir, 'edge_logs')).toBe(size);
      expect(store.db.query('SELECT * FROM edge_logs ORDER BY rid')).toEqual(rows);
      expect(store.db.query('SELECT count(*) AS c FROM edge_logs_ids')).toEqual([{ c: 3 }]);

      // The store keeps working: the same records import in full afterwards.
      expect(await run(store, ndjson(...many(3, 'x')), 'edge_logs')).toMatchObject({ imported: 3, duplicates: 0 });
      await close(store);
      const again = await open(dir);
      expect(counts(again)).toMatchObject({ edge_logs: 6, function_edge_logs: 3, postgres_logs: 1 });
      expect(JSON.parse(records(again, 'edge_logs', 'cloudflare.logs.prod')[3]!)).toMatchObject({ id: 'x0', timestamp: T0 });
    }, 10_000); // a reader that misses the error waits forever: fail fast instead
  }

  it('function edge logs: the rolled-back summary keeps its per-function rows', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const summary = store.summary();
    const size = segmentSize(dir, 'function_edge_logs');
    async function* failing() {
      const recs = Array.from({ length: 2100 }, (_, i) => fn(`g${i}`, T0 + i, i % 2 ? 'fn-a' : 'fn-new'));
      yield Buffer.from(ndjson(...recs));
      throw new Error('disk went away');
    }
    await expect(importStream(store, failing(), { source: 'function_edge_logs' })).rejects.toThrow('disk went away');
    expect(store.summary()).toEqual(summary);
    expect(segmentSize(dir, 'function_edge_logs')).toBe(size);
  });

  it('aborted before the first record: the store reopens unchanged', async () => {
    const dir = tempDir();
    await close(await seeded(dir));
    const store = await open(dir);
    const summary = store.summary();
    async function* failing() {
      yield Buffer.from('{"id":"z","timestamp":');
      throw new Error('disk went away');
    }
    await expect(importStream(store, failing(), { source: 'edge_logs' })).rejects.toBeInstanceOf(ImportFailure);
    await close(store);
    expect((await open(dir)).summary()).toEqual(summary);
  });
});

describe('repair at open', () => {
  it('garbage appended to a segment past the last committed record is cut off at open', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const stored = records(store, 'edge_logs', 'cloudflare.logs.prod');
    await close(store);
    const size = segmentSize(dir, 'edge_logs');
    expect(size).toBe(linesBytes(stored));
    fs.appendFileSync(segmentFile(dir, 'edge_logs'), '{"id":"half-written","timest');

    const again = await open(dir);
    expect(segmentSize(dir, 'edge_logs')).toBe(size);
    expect(records(again, 'edge_logs', 'cloudflare.logs.prod')).toEqual(stored);
    await run(again, ndjson(edge('e4', T0)), 'edge_logs');
    const text = fs.readFileSync(segmentFile(dir, 'edge_logs'), 'utf8');
    expect(text.trimEnd().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['e1', 'e2', 'e3', 'e4']);
  });

  it('a segment shorter than the store points to is an error at open, not silent data loss', async () => {
    const dir = tempDir();
    await close(await seeded(dir));
    fs.truncateSync(segmentFile(dir, 'edge_logs'), 10);
    await expect(LogStore.open(dir)).rejects.toThrow(/records\/edge_logs\.ndjson holds 10 bytes but the store points to byte/);
  });

  it('a store.sqlite.tmp left behind by a crashed save is removed and ignored', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const summary = store.summary();
    await close(store);
    const tmp = path.join(dir, `${STORE_FILE}.tmp`);
    fs.writeFileSync(tmp, 'half of a database image');
    const again = await open(dir);
    expect(fs.existsSync(tmp)).toBe(false);
    expect(again.summary()).toEqual(summary);
  });

  it('a new data folder gets a saved empty store right away', async () => {
    const dir = path.join(tempDir(), 'nested', 'data');
    const store = await open(dir);
    expect(fs.existsSync(path.join(dir, STORE_FILE))).toBe(true);
    expect(Object.values(counts(store)).every((c) => c === 0)).toBe(true);
  });
});

describe('deleteSource', () => {
  it('removes the source rows, ids and summary, empties its segment, and returns the count', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    expect(await store.deleteSource('cloudflare.logs.prod')).toBe(3);
    expect(store.db.query('SELECT count(*) AS c FROM edge_logs')).toEqual([{ c: 0 }]);
    expect(store.db.query('SELECT count(*) AS c FROM edge_logs_ids')).toEqual([{ c: 0 }]);
    expect(bySource(store, 'edge_logs')).toMatchObject({ count: 0, minTimestamp: null, maxTimestamp: null, projects: [] });
    expect(segmentSize(dir, 'edge_logs')).toBe(0);
  });

  it('leaves the other sources untouched', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const fnBefore = records(store, 'function_edge_logs', 'deno-relay-logs');
    await store.deleteSource('cloudflare.logs.prod');
    expect(counts(store)).toMatchObject({ edge_logs: 0, function_edge_logs: 3, postgres_logs: 1 });
    expect(records(store, 'function_edge_logs', 'deno-relay-logs')).toEqual(fnBefore);
  });

  it('is durable, and the same records import again in full afterwards (not as duplicates)', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    await store.deleteSource('cloudflare.logs.prod');
    await close(store);
    const again = await open(dir);
    expect(counts(again)).toMatchObject({ edge_logs: 0, function_edge_logs: 3 });
    expect(await run(again, EDGE, 'edge_logs')).toMatchObject({ imported: 3, duplicates: 0 });
    expect(JSON.parse(records(again, 'edge_logs', 'cloudflare.logs.prod')[0]!)).toMatchObject({ id: 'e1', timestamp: T0 });
  });

  it('of an empty source returns 0', async () => {
    const store = await open(tempDir());
    expect(await store.deleteSource('gotrue.logs.prod')).toBe(0);
  });
});

describe('change notifications', () => {
  it('an import that stores records and a delete each bump dataVersion; an import of only duplicates does not', async () => {
    const store = await open(tempDir());
    let calls = 0;
    store.onChange(() => calls++);
    const v0 = store.dataVersion;
    await run(store, EDGE, 'edge_logs');
    const v1 = store.dataVersion;
    expect(v1).toBeGreaterThan(v0);
    await run(store, EDGE, 'edge_logs');
    expect(store.dataVersion).toBe(v1);
    await store.deleteSource('cloudflare.logs.prod');
    expect(store.dataVersion).toBeGreaterThan(v1);
    expect(calls).toBe(store.dataVersion - v0);
  });
});
