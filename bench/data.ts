/** Bench inputs: realistic exports from the demo generator, generated once and reused. */
import fs from 'node:fs';
import path from 'node:path';
import { generateRecords } from '../server/demo/generate.ts';
import { writeExport } from '../server/demo/write-export.ts';
import type { SourceName } from '../server/sources.ts';

export const BENCH_NOW = Date.UTC(2026, 10, 22, 12, 0, 0) * 1000;
export const BENCH_DIR = path.resolve(import.meta.dirname, 'data');

export interface BenchFile {
  source: SourceName;
  path: string;
  records: number;
  bytes: number;
}

/** Writes (or reuses) `<alias>-<n>.ndjson` for the two hot sources. */
export async function benchFiles(records: number): Promise<BenchFile[]> {
  fs.mkdirSync(BENCH_DIR, { recursive: true });
  const out: BenchFile[] = [];
  for (const [source, alias] of [
    ['cloudflare.logs.prod', 'edge_logs'],
    ['deno-relay-logs', 'function_edge_logs'],
  ] as const) {
    const file = path.join(BENCH_DIR, `${alias}-${records}.ndjson`);
    if (!fs.existsSync(file)) {
      const t = performance.now();
      await writeExport(`${file}.tmp`, generateRecords(source, { now: BENCH_NOW, count: records, seed: 7 }), { source, format: 'ndjson' });
      fs.renameSync(`${file}.tmp`, file);
      console.error(`generated ${file} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    out.push({ source, path: file, records, bytes: fs.statSync(file).size });
  }
  return out;
}

/** Peak RSS of this process so far, bytes (the kernel's high-water mark). */
export function peakRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}

export const mb = (bytes: number) => bytes / 1024 / 1024;
export const fmt = (n: number, digits = 1) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Runs a bench child script and returns the JSON it prints last. */
export async function runChild(script: string, args: string[]): Promise<Record<string, unknown>> {
  const { spawn } = await import('node:child_process');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--expose-gc', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code !== 0) reject(new Error(`${script} exited ${code}: ${out}`));
      else resolve(JSON.parse(last) as Record<string, unknown>);
    });
  });
}

/** p50, p95 and p99 of latency samples. */
export function percentiles(samples: number[]): { p50: number; p95: number; p99: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: s[Math.floor((s.length - 1) * 0.5)]!, p95: s[Math.ceil(s.length * 0.95) - 1]!, p99: s[Math.max(0, Math.ceil(s.length * 0.99) - 1)]! };
}

/** Runs fn once to warm up, then `runs` times, and returns the latency percentiles (ms). */
export function timeRuns(fn: () => unknown, runs: number): { p50: number; p95: number; p99: number } {
  fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    samples.push(performance.now() - t);
  }
  return percentiles(samples);
}
