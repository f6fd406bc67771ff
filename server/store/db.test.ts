import { describe, expect, it } from 'vitest';
import { openDb } from './db.ts';

/** An image of a database with one table of `n` rows of 1 KiB each. */
async function imageOf(n: number): Promise<Uint8Array> {
  const db = await openDb();
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  for (let i = 0; i < n; i++) db.run('INSERT INTO t (v) VALUES (?)', [`${i}`.padEnd(1024, 'x')]);
  const image = db.exportImage();
  db.close();
  return image;
}

describe('opening a database from an image', () => {
  it('copies the image unless it is handed over', async () => {
    const image = await imageOf(50);
    const before = image.slice();
    const db = await openDb(image);
    db.run('UPDATE t SET v = ? WHERE id = 1', ['changed']);
    // The database wrote to its own copy: the caller's bytes are as they were.
    expect(Buffer.compare(image, before)).toBe(0);
    expect(db.rows('SELECT v FROM t WHERE id = 1')).toEqual([['changed']]);
    db.close();
  });

  it('uses the memory of an image handed over (no copy), and reads and writes it as its file', async () => {
    const image = await imageOf(50);
    const before = image.slice();
    const db = await openDb(image, { handOver: true });
    expect(db.rows('SELECT count(*), min(id), max(id) FROM t')).toEqual([[50, 1, 50]]);
    db.run('UPDATE t SET v = ? WHERE id = 1', ['changed']);
    // The page written went to the memory handed over: it is the database's file now.
    expect(Buffer.compare(image, before)).not.toBe(0);
    // Growing past it moves the file to new memory; every row is still there.
    for (let i = 0; i < 200; i++) db.run('INSERT INTO t (v) VALUES (?)', ['y'.repeat(1024)]);
    expect(db.rows('SELECT count(*) FROM t')).toEqual([[250]]);
    const again = await openDb(db.exportImage());
    expect(again.rows("SELECT v FROM t WHERE id = 1")).toEqual([['changed']]);
    again.close();
    db.close();
  });

  it('takes a view into a larger buffer without touching the bytes around it', async () => {
    const image = await imageOf(10);
    const around = new Uint8Array(image.length + 8192).fill(7);
    around.set(image, 4096);
    const view = around.subarray(4096, 4096 + image.length);
    const db = await openDb(view, { handOver: true });
    for (let i = 0; i < 100; i++) db.run('INSERT INTO t (v) VALUES (?)', ['z'.repeat(1024)]);
    expect(db.rows('SELECT count(*) FROM t')).toEqual([[110]]);
    expect(around.subarray(0, 4096).every((b) => b === 7)).toBe(true);
    expect(around.subarray(4096 + image.length).every((b) => b === 7)).toBe(true);
    db.close();
  });
});

describe('query', () => {
  it('gives each row as an object by column name: every type, NULL, a repeated name as its last column, and the columns of a table changed since', async () => {
    const db = await openDb();
    db.exec("CREATE TABLE t (a INTEGER, b TEXT, c BLOB, d REAL); INSERT INTO t VALUES (1, 'x', x'0102', 1.5), (NULL, NULL, NULL, NULL)");
    expect(db.query('SELECT * FROM t ORDER BY a IS NULL')).toEqual([
      { a: 1, b: 'x', c: new Uint8Array([1, 2]), d: 1.5 },
      { a: null, b: null, c: null, d: null },
    ]);
    expect(db.query('SELECT a AS n, b AS n FROM t WHERE a = 1')).toEqual([{ n: 'x' }]);
    expect(db.query('SELECT count(*) AS n FROM t WHERE a > 5')).toEqual([{ n: 0 }]);
    expect(db.query('SELECT * FROM t WHERE a > 5')).toEqual([]);
    // The same statement after the table gained a column (sqlite prepares it again): the new names.
    db.exec('ALTER TABLE t ADD COLUMN e INTEGER DEFAULT 7');
    expect(db.query('SELECT * FROM t ORDER BY a IS NULL')[0]).toEqual({ a: 1, b: 'x', c: new Uint8Array([1, 2]), d: 1.5, e: 7 });
    db.close();
  });
});
