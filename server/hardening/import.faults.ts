/**
 * Slow: a 2 GB NDJSON export, generated on the fly (never written as a file), imports
 * with bounded memory: RSS is sampled throughout and its growth stays under 600 MB.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { importStream } from '../ingest/import.ts';
import { LogStore } from '../store/log-store.ts';
import { NOW, tempDir } from '../testing/fixtures.ts';
import { P, filesUnder } from './helpers.ts';

const TARGET_BYTES = 2 * 1024 ** 3;
const MiB = 1024 * 1024;
const dir = tempDir('le-2gb-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Edge records of about 2 KB each, as fast as they can be made, in 1 MiB chunks. */
function hugeExport(targetBytes: number): { stream: Readable; produced: () => { bytes: number; lines: number } } {
  const pad = 'x'.repeat(1500);
  let bytes = 0;
  let lines = 0;
  function* chunks(): Generator<Buffer> {
    let parts: string[] = [];
    let size = 0;
    while (bytes < targetBytes) {
      const i = lines++;
      const ts = NOW - (i % 86_400_000) * 1000;
      const route = `/rest/v1/table_${i % 997}`;
      const url = `https://${P}.supabase.co${route}?select=*&limit=${i % 50}`;
      const line = `{"id":"big-${i}","timestamp":${ts},"project":"${P}","event_message":"GET | 200 | ${url} ${pad}","metadata":{"request":{"method":"GET","url":"${url}","path":"${route}"},"response":{"status_code":${i % 13 === 0 ? 500 : 200}}}}\n`;
      parts.push(line);
      size += line.length;
      bytes += line.length;
      if (size >= MiB) {
        yield Buffer.from(parts.join(''));
        parts = [];
        size = 0;
      }
    }
    if (parts.length) yield Buffer.from(parts.join(''));
  }
  return { stream: Readable.from(chunks(), { objectMode: false }), produced: () => ({ bytes, lines }) };
}

it('a 2 GB NDJSON stream imports with RSS growth under 600 MB', async () => {
  const store = await LogStore.open(path.join(dir, 'data'));
  try {
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100);
    const { stream, produced } = hugeExport(TARGET_BYTES);
    const started = performance.now();
    let lastLog = 0;
    const report = await importStream(store, stream, {
      source: 'edge_logs',
      onProgress: (p) => {
        if (p.bytes - lastLog >= 256 * MiB) {
          lastLog = p.bytes;
          console.log(`${(p.bytes / MiB).toFixed(0)} MiB, ${p.records} records, RSS ${(process.memoryUsage().rss / MiB).toFixed(0)} MiB`);
        }
      },
    });
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    const { bytes, lines } = produced();
    const growth = (peak - baseline) / MiB;
    const partitions = store.partitions('cloudflare.logs.prod');
    const onDisk = (ext: string) => filesUnder(path.join(dir, 'data')).filter((f) => f.endsWith(ext)).reduce((n, f) => n + fs.statSync(path.join(dir, 'data', f)).size, 0);
    console.log(
      `2 GB import: ${(bytes / MiB).toFixed(0)} MiB, ${lines} records in ${seconds.toFixed(1)} s ` +
        `(${(bytes / MiB / seconds).toFixed(0)} MiB/s); RSS baseline ${(baseline / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB, growth ${growth.toFixed(0)} MiB; ` +
        `${partitions.length} partitions: databases ${(onDisk('.sqlite') / MiB).toFixed(0)} MiB, record blocks ${(onDisk('.records') / MiB).toFixed(0)} MiB`,
    );
    expect(bytes).toBeGreaterThanOrEqual(TARGET_BYTES);
    expect(report).toMatchObject({ imported: lines, duplicates: 0, rejected: 0 });
    expect(growth).toBeLessThan(600);
    // Everything is committed: the partitions hold every record, each record file is exactly
    // its committed length, and the first and last record of every partition read back whole.
    expect(partitions.reduce((n, p) => n + p.row.rows, 0)).toBe(lines);
    for (const p of partitions) {
      expect(fs.statSync(p.blocks.file).size).toBe(p.row.record_bytes);
      const ends = store.use(p).rows('SELECT blk, boff, len FROM edge_logs WHERE rid IN (SELECT min(rid) FROM edge_logs UNION SELECT max(rid) FROM edge_logs)');
      for (const [blk, boff, len] of ends) {
        const rec = JSON.parse(store.readRecord(p, { blk: blk as number, boff: boff as number, len: len as number }).toString('utf8')) as { id: string; project: string };
        expect(rec).toMatchObject({ id: expect.stringMatching(/^big-\d+$/), project: P });
      }
    }
  } finally {
    await store.close();
  }
});
