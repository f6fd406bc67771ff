/**
 * One failed query must never leave the engine broken. A trapped WebAssembly
 * instance (here: a function result overflowing sql.js's 5 MiB stack, with the guard against
 * it lifted) is detected, and the store reopens from its last commit on a fresh instance.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importStream } from '../ingest/import.ts';
import { chunked, edgeNdjson, filesUnder, storeProblems } from '../hardening/helpers.ts';
import { storeKeeper } from '../testing/fixtures.ts';
import { EngineTrapped, engineLimits, engineTrapped, type Db } from './db.ts';
import type { LogStore } from './log-store.ts';

const keeper = storeKeeper();
const guard = engineLimits.functionTextChars;
afterEach(async () => {
  engineLimits.functionTextChars = guard;
  await keeper.cleanup();
});

/** Makes the shared instance trap: a 6 MB function result is copied onto its 5 MiB stack. */
function trap(db: Db): unknown {
  engineLimits.functionTextChars = Infinity;
  db.defineFunction('huge_text', () => 'x'.repeat(6_000_000));
  try {
    db.query('SELECT length(huge_text()) AS n');
  } catch (err) {
    return err;
  } finally {
    engineLimits.functionTextChars = guard;
  }
  return undefined;
}

const edgeIds = (store: LogStore) => store.dump('cloudflare.logs.prod').map((r) => r.id);

describe('a trapped engine', () => {
  it('without the guard a long function result traps; with it, the same call is an ordinary error', async () => {
    const store = await keeper.open(keeper.newDir());
    store.catalog.defineFunction('long_text', () => 'y'.repeat(engineLimits.functionTextChars + 1));
    expect(() => store.catalog.query('SELECT long_text()')).toThrow(/long_text returned 1048577 characters; SQL functions may return at most 1048576/);
    expect(store.catalog.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    expect(engineTrapped()).toBe(false);
  });

  it('is detected: every database of it refuses further use, then the store reopens from its last commit and works', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    await importStream(store, [Buffer.from(edgeNdjson(500, { prefix: 'saved' }))], { source: 'edge_logs' });
    const before = edgeIds(store);
    expect(before).toHaveLength(500);

    expect(trap(store.catalog)).toBeInstanceOf(EngineTrapped);
    expect(engineTrapped()).toBe(true);
    // Nothing touches the corrupt memory again: each call fails at once, with the same class.
    expect(() => store.summary()).toThrow(EngineTrapped);
    expect(() => edgeIds(store)).toThrow(EngineTrapped);

    await store.recoverEngine();
    expect(engineTrapped()).toBe(false);
    expect(edgeIds(store)).toEqual(before);
    expect(storeProblems(store)).toEqual([]);
    const more = await importStream(store, [Buffer.from(edgeNdjson(100, { prefix: 'after' }))], { source: 'edge_logs' });
    expect(more.imported).toBe(100);
    expect(edgeIds(store)).toHaveLength(600);
  });

  it('during an import: the import fails, nothing of it stays in memory or on disk, and the store goes on', async () => {
    const dir = keeper.newDir();
    const store = await keeper.open(dir);
    await importStream(store, [Buffer.from(edgeNdjson(300, { prefix: 'saved' }))], { source: 'edge_logs' });
    const before = edgeIds(store);
    await store.columnsSettled();
    const files = filesUnder(dir);
    const sizes = files.map((f) => fs.statSync(path.join(dir, f)).size);
    const body = Buffer.from(edgeNdjson(4000, { prefix: 'lost' }));
    let trapped = false;
    const failed = await importStream(store, chunked(body, 16 * 1024), {
      source: 'edge_logs',
      onProgress: () => {
        // Part of the import is in memory when the engine traps (a reader's query, say).
        if (!trapped) trapped = trap(store.catalog) instanceof EngineTrapped;
      },
    }).catch((err: unknown) => err);
    expect(trapped).toBe(true);
    expect(failed).toBeInstanceOf(EngineTrapped);
    await store.recoverEngine();
    expect(edgeIds(store)).toEqual(before);
    expect(filesUnder(dir)).toEqual(files);
    expect(files.map((f) => fs.statSync(path.join(dir, f)).size)).toEqual(sizes);
    expect(storeProblems(store)).toEqual([]);
    const again = await importStream(store, [body], { source: 'edge_logs' });
    expect(again.imported).toBe(4000);
  });

  it('the recovery starts by itself when a trap is noticed', async () => {
    const store = await keeper.open(keeper.newDir());
    await importStream(store, [Buffer.from(edgeNdjson(50))], { source: 'edge_logs' });
    trap(store.catalog);
    // No one calls recoverEngine: the store's watch does.
    for (let i = 0; i < 100 && engineTrapped(); i++) await new Promise((r) => setTimeout(r, 10));
    await store.recoverEngine();
    expect(edgeIds(store)).toHaveLength(50);
  });
});
