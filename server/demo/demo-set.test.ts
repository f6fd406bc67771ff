import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOURCES } from '../sources.ts';
import { parseCliArgs } from './cli.ts';
import { writeDemoSet, type DemoSetSummary } from './demo-set.ts';

const NOW = Date.UTC(2026, 10, 22, 10, 0, 0) * 1000;

let dir: string;
let summary: DemoSetSummary;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'demo-set-'));
  summary = await writeDemoSet(dir, { now: NOW, records: 150, seed: 1 });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lines = async (file: string) => (await readFile(join(dir, file), 'utf8')).split('\n').filter((l) => l !== '');

describe('writeDemoSet', () => {
  it('writes <alias>.ndjson per source: N for edge and function edge, max(100, N/10) for the rest', async () => {
    const top = (await readdir(dir)).sort();
    expect(top).toEqual([...SOURCES.map((s) => `${s.alias}.ndjson`), 'variants'].sort());
    for (const s of SOURCES) {
      const expected = s.alias === 'edge_logs' || s.alias === 'function_edge_logs' ? 150 : 100;
      const recs = (await lines(`${s.alias}.ndjson`)).map((l) => JSON.parse(l) as { id: string; timestamp: number; project?: string });
      expect(recs).toHaveLength(expected);
      expect(recs.every((r) => typeof r.id === 'string' && Number.isSafeInteger(r.timestamp) && r.timestamp <= NOW)).toBe(true);
      expect(recs.every((r) => (s.project.in === 'record') === (r.project !== undefined))).toBe(true);
    }
  });

  it('writes every format x shape x timestamp variant of the same edge records, plus bom/crlf and no-ids', async () => {
    const variants = (await readdir(join(dir, 'variants'))).sort();
    expect(variants).toHaveLength(4 * 2 * 6 + 3);
    expect(variants).toContain('edge_logs.query.iso-nanos.csv');
    expect(variants).toContain('edge_logs.ingest.millis.result.json');
    expect(variants).toContain('edge_logs.query.seconds.json');
    expect(variants).toContain('edge_logs.ingest.micros.ndjson');
    // With N <= 500 the variants hold exactly the records of edge_logs.ndjson.
    expect(await lines('variants/edge_logs.ingest.micros.ndjson')).toEqual(await lines('edge_logs.ndjson'));
  });

  it('reports every file with its records and bytes', () => {
    expect(summary.files).toHaveLength(9 + 51);
    expect(summary.records).toBe(2 * 150 + 7 * 100 + 51 * 150);
    expect(summary.bytes).toBe(summary.files.reduce((n, f) => n + f.bytes, 0));
  });
});

describe('parseCliArgs', () => {
  it('parses the flags, with defaults for records and seed', () => {
    expect(parseCliArgs(['--out', '/tmp/x', '--now', '2026-11-22T10:00:00.5Z'])).toEqual({
      out: '/tmp/x',
      now: 1_795_341_600_500_000,
      records: 10_000,
      seed: 1,
    });
    expect(parseCliArgs(['--out', '/tmp/x', '--now', '2026-11-22T10:00:00Z', '--records', '20', '--seed=-4'])).toMatchObject({ records: 20, seed: -4 });
  });

  it('rejects missing or malformed flags with a message', () => {
    expect(() => parseCliArgs(['--now', '2026-11-22T10:00:00Z'])).toThrow(/--out/);
    expect(() => parseCliArgs(['--out', 'x'])).toThrow(/--now/);
    expect(() => parseCliArgs(['--out', 'x', '--now', 'yesterday'])).toThrow(/ISO/);
    expect(() => parseCliArgs(['--out', 'x', '--now', '2026-11-22T10:00:00Z', '--records', '1e3'])).toThrow(/--records/);
    expect(() => parseCliArgs(['--out', 'x', '--now', '2026-11-22T10:00:00Z', '--bogus'])).toThrow();
  });
});
