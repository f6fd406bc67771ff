/**
 * The store's lifecycle: save, close, reopen; failed and aborted imports leave it as it was;
 * crash leftovers (record file tails, temp files) are repaired at open; deleting a source.
 * (Partitions, budgets, conversion and crash states of the partitioned layout: partitions.test.ts.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ImportFailure, importFile, importStream } from '../ingest/import.ts';
import { filesUnder } from '../hardening/helpers.ts';
import type { SourceName } from '../sources.ts';
import { storeKeeper } from '../testing/fixtures.ts';
import { answeringStarted } from '../turns.ts';
import { LogStore, type SourceSummary } from './log-store.ts';
import type { ColumnsCache } from './columns-cache.ts';
import { ROW_COLUMNS } from './scan-columns.ts';
import { isDerivedPartFile } from './store-files.ts';
import { TextDictionary } from './text-dictionary.ts';

// 2023-03-23T14:40:18.149123Z, plus whole seconds.
const T0 = Date.UTC(2023, 2, 23, 14, 40, 18) * 1000 + 149_123;
const SEC = 1_000_000;
const PA = 'projaaaaaaaaaaaaaaaa';
const PB = 'projbbbbbbbbbbbbbbbb';

const keeper = storeKeeper('le-store-');
const { newDir: tempDir, close } = keeper;
const open = (dir: string) => keeper.open(dir);

afterEach(() => keeper.cleanup());

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

/** Every stored record of a source, as its text, in partition then insertion order. */
const records = (store: LogStore, source: SourceName) => store.dump(source).map((r) => r.raw);

const counts = (store: LogStore) => Object.fromEntries(store.summary().map((s) => [s.alias, s.count]));
/** Files under parts/ with their sizes: what is on disk besides the catalog. */
// Columns files and block indexes are derived, built in the background: not the store's content.
const partFiles = (dir: string) => filesUnder(path.join(dir, 'parts')).filter((f) => !isDerivedPartFile(f)).map((f) => `${f} ${fs.statSync(path.join(dir, 'parts', f)).size}`);
/** The record file of the (only) partition of a source. */
const recordFile = (store: LogStore, source: SourceName) => {
  const [p, ...more] = store.partitions(source);
  if (!p || more.length) throw new Error(`expected one partition of ${source}`);
  return p.blocks.file;
};

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
    const edgeRows = store.dump('cloudflare.logs.prod');
    const fnRows = store.dump('deno-relay-logs');
    await close(store);

    const again = await open(dir);
    expect(again.summary()).toEqual(summary);
    expect(counts(again)).toMatchObject({ edge_logs: 3, function_edge_logs: 3, postgres_logs: 1 });
    expect(again.dump('cloudflare.logs.prod')).toEqual(edgeRows);
    expect(again.dump('deno-relay-logs')).toEqual(fnRows);
    expect(edgeRows.map((r) => r.id)).toEqual(['e1', 'e2', 'e3']);
    expect(JSON.parse(edgeRows[1]!.raw)).toMatchObject({ id: 'e2', timestamp: T0 + 5 * SEC, project: PB });
  });

  it('a reopened store still dedupes: importing the same files again imports 0', async () => {
    const dir = tempDir();
    await close(await seeded(dir));
    const again = await open(dir);
    expect(await run(again, EDGE, 'edge_logs')).toMatchObject({ imported: 0, duplicates: 3 });
    expect(await run(again, FN, 'function_edge_logs')).toMatchObject({ imported: 0, duplicates: 3 });
    expect(counts(again)).toMatchObject({ edge_logs: 3, function_edge_logs: 3 });
  });

  it('every record comes back byte for byte as it came, across reopen and later imports', async () => {
    const dir = tempDir();
    const store = await open(dir);
    // Spacing, key order and escapes as in the file: the stored text is the line itself.
    const a = `{ "id": "a", "timestamp": ${T0}, "project": "${PA}", "event_message": "caf\\u00e9 ü", "metadata": {"z": 1, "a": [2]} }`;
    const b = `{"project":"${PA}","timestamp":${T0 + SEC},"id":"b","event_message":"tab\\there"}`;
    await run(store, `${a}\r\n`, 'edge_logs');
    await close(store);
    const again = await open(dir);
    await run(again, `${b}\n`, 'edge_logs');
    expect(records(again, 'cloudflare.logs.prod')).toEqual([a, b]);
    await close(again);
    expect(records(await open(dir), 'cloudflare.logs.prod')).toEqual([a, b]);
  });

  it('new records imported after reopen are readable and the old ones unchanged', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const before = records(store, 'cloudflare.logs.prod');
    await close(store);
    const again = await open(dir);
    expect(await run(again, ndjson(edge('e4', T0 + 9 * SEC)), 'edge_logs')).toMatchObject({ imported: 1 });
    const after = records(again, 'cloudflare.logs.prod');
    expect(after.slice(0, 3)).toEqual(before);
    expect(JSON.parse(after[3]!)).toMatchObject({ id: 'e4', timestamp: T0 + 9 * SEC });
  });
});

describe('failed imports leave the data intact', () => {
  async function expectUnchanged(dir: string, store: LogStore, attempt: () => Promise<unknown>) {
    const summary = store.summary();
    const files = partFiles(dir);
    const rows = store.dump('cloudflare.logs.prod');
    await expect(attempt()).rejects.toBeInstanceOf(ImportFailure);
    expect(store.summary()).toEqual(summary);
    expect(partFiles(dir)).toEqual(files);
    expect(store.dump('cloudflare.logs.prod')).toEqual(rows);
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
    // The background columns builder writes its files off the thread: its descriptors come and go on their own.
    await store.columnsSettled();
    const before = fds();
    for (let i = 0; i < 5; i++) await importFile(store, file).catch(() => undefined);
    await store.columnsSettled();
    // Descriptors closed off the thread go a moment later (on a busy machine, more than a moment):
    // a leaked one never does.
    await vi.waitFor(() => expect(fds()).toBe(before), { timeout: 5000, interval: 20 });
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
    it(`${label}: the import throws and the store is exactly as before (counts, summary, rows, files); it reopens`, async () => {
      const dir = tempDir();
      const store = await seeded(dir);
      const summary = store.summary();
      const files = partFiles(dir);
      const rows = store.dump('cloudflare.logs.prod');

      await expect(importStream(store, make(), { source: 'edge_logs' })).rejects.toThrow('disk went away');

      expect(store.summary()).toEqual(summary);
      expect(partFiles(dir)).toEqual(files);
      expect(store.dump('cloudflare.logs.prod')).toEqual(rows);
      expect(rows.map((r) => r.id)).toEqual(['e1', 'e2', 'e3']);

      // The store keeps working: the same records import in full afterwards.
      expect(await run(store, ndjson(...many(3, 'x')), 'edge_logs')).toMatchObject({ imported: 3, duplicates: 0 });
      await close(store);
      const again = await open(dir);
      expect(counts(again)).toMatchObject({ edge_logs: 6, function_edge_logs: 3, postgres_logs: 1 });
      expect(JSON.parse(records(again, 'cloudflare.logs.prod')[3]!)).toMatchObject({ id: 'x0', timestamp: T0 });
    }, 10_000); // a reader that misses the error waits forever: fail fast instead
  }

  it('function edge logs: the rolled-back summary keeps its per-function rows', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const summary = store.summary();
    const files = partFiles(dir);
    const rows = store.dump('deno-relay-logs');
    async function* failing() {
      const recs = Array.from({ length: 2100 }, (_, i) => fn(`g${i}`, T0 + i, i % 2 ? 'fn-a' : 'fn-new'));
      yield Buffer.from(ndjson(...recs));
      throw new Error('disk went away');
    }
    await expect(importStream(store, failing(), { source: 'function_edge_logs' })).rejects.toThrow('disk went away');
    expect(store.summary()).toEqual(summary);
    expect(partFiles(dir)).toEqual(files);
    expect(store.dump('deno-relay-logs')).toEqual(rows);
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
  it('garbage appended to a record file past its committed length is cut off (at its first read after open)', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const stored = records(store, 'cloudflare.logs.prod');
    const file = recordFile(store, 'cloudflare.logs.prod');
    await close(store);
    const size = fs.statSync(file).size;
    fs.appendFileSync(file, '{"id":"half-written","timest');

    const again = await open(dir);
    expect(records(again, 'cloudflare.logs.prod')).toEqual(stored);
    expect(fs.statSync(file).size).toBe(size);
    // The next import appends after the committed bytes, and every record reads back.
    await run(again, ndjson(edge('e4', T0)), 'edge_logs');
    expect(again.dump('cloudflare.logs.prod').map((r) => r.id)).toEqual(['e1', 'e2', 'e3', 'e4']);
    await close(again);
    expect(records(await open(dir), 'cloudflare.logs.prod').map((r) => (JSON.parse(r) as { id: string }).id)).toEqual(['e1', 'e2', 'e3', 'e4']);
  });

  it('a record file shorter than the catalog says is an error naming it when read, not silent data loss', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const file = recordFile(store, 'cloudflare.logs.prod');
    await close(store);
    fs.truncateSync(file, 10);
    const again = await open(dir);
    expect(() => again.dump('cloudflare.logs.prod')).toThrow(/^the store file parts\/edge_logs\/20230323\.records is damaged \(it holds 10 bytes but the catalog counts \d+\)/);
    // The other sources are unaffected.
    expect(records(again, 'deno-relay-logs')).toHaveLength(3);
  });

  it('a catalog.sqlite.tmp left behind by a crashed save is removed and ignored', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const summary = store.summary();
    await close(store);
    const tmp = path.join(dir, 'catalog.sqlite.tmp');
    fs.writeFileSync(tmp, 'half of a database image');
    const again = await open(dir);
    expect(fs.existsSync(tmp)).toBe(false);
    expect(again.summary()).toEqual(summary);
  });

  it('a new data folder gets a saved empty store right away', async () => {
    const dir = path.join(tempDir(), 'nested', 'data');
    const store = await open(dir);
    expect(fs.existsSync(path.join(dir, 'catalog.sqlite'))).toBe(true);
    expect(Object.values(counts(store)).every((c) => c === 0)).toBe(true);
  });
});

describe('deleteSource', () => {
  it('removes the source rows, ids and summary, its partitions and their files, and returns the count', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    expect(await store.deleteSource('cloudflare.logs.prod')).toBe(3);
    expect(store.dump('cloudflare.logs.prod')).toEqual([]);
    expect(store.partitions('cloudflare.logs.prod')).toEqual([]);
    expect(store.catalog.query('SELECT count(*) AS c FROM partitions WHERE source = 1')).toEqual([{ c: 0 }]);
    expect(bySource(store, 'edge_logs')).toMatchObject({ count: 0, minTimestamp: null, maxTimestamp: null, projects: [] });
    expect(filesUnder(path.join(dir, 'parts', 'edge_logs'))).toEqual([]);
  });

  it('leaves the other sources untouched', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const fnBefore = store.dump('deno-relay-logs');
    await store.deleteSource('cloudflare.logs.prod');
    expect(counts(store)).toMatchObject({ edge_logs: 0, function_edge_logs: 3, postgres_logs: 1 });
    expect(store.dump('deno-relay-logs')).toEqual(fnBefore);
  });

  it('is durable, and the same records import again in full afterwards (not as duplicates)', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    await store.deleteSource('cloudflare.logs.prod');
    await close(store);
    const again = await open(dir);
    expect(counts(again)).toMatchObject({ edge_logs: 0, function_edge_logs: 3 });
    expect(await run(again, EDGE, 'edge_logs')).toMatchObject({ imported: 3, duplicates: 0 });
    expect(JSON.parse(records(again, 'cloudflare.logs.prod')[0]!)).toMatchObject({ id: 'e1', timestamp: T0 });
  });

  it('waits for a columns file being written off the thread when its files go, so none is left behind', async () => {
    const dir = tempDir();
    const store = await seeded(dir);
    const [p] = store.partitions('cloudflare.logs.prod');
    const version = p!.row.version;
    const cols = store.committedColumns(p!, ROW_COLUMNS)!;
    // The write is held before its temp file exists, until the deletion has removed the partition's files.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const sync = TextDictionary.prototype.syncOffThread;
    const spy = vi.spyOn(TextDictionary.prototype, 'syncOffThread').mockImplementationOnce(async function (this: TextDictionary) {
      await held;
      return sync.call(this);
    });
    try {
      const cache = (store as unknown as { columnsCache: ColumnsCache }).columnsCache;
      const write = cache.writeColumnsOffThread(p!, version, cols, () => fs.existsSync(p!.dbFile(version)));
      let deleted = false;
      const deletion = store.deleteSource('cloudflare.logs.prod').then(() => (deleted = true));
      for (let i = 0; i < 400 && fs.existsSync(p!.dbFile(version)); i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(fs.existsSync(p!.dbFile(version))).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(deleted).toBe(false);
      release();
      await deletion;
      await write;
      expect(filesUnder(path.join(dir, 'parts', 'edge_logs'))).toEqual([]);
    } finally {
      release();
      spy.mockRestore();
    }
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

describe('the background builder and the reads being answered', () => {
  it('takes no step while a read is being answered (for up to a second), and builds once it ends', async () => {
    const dir = tempDir();
    await close(await seeded(dir));
    const cols = () => filesUnder(path.join(dir, 'parts')).filter((f) => f.endsWith('.cols'));
    expect(cols().length).toBeGreaterThanOrEqual(3);
    for (const f of cols()) fs.rmSync(path.join(dir, 'parts', f));
    const reading = answeringStarted();
    try {
      const store = await open(dir);
      await new Promise((r) => setTimeout(r, 400));
      expect(cols()).toEqual([]);
      reading();
      await store.columnsSettled();
      expect(cols().length).toBeGreaterThanOrEqual(3);
    } finally {
      reading();
    }
  });
});
