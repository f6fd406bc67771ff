/**
 * The record order of a bench file, as a dimension of the run: exports from the platform and
 * Logflare's pages come newest first (the generator's order), a hand-made dump may come oldest
 * first, and a merge of several exports is ordered within each hour at best. Import speed and the
 * waits of other requests during an import depend on it, so the bench measures all three.
 *
 * Files are derived once from the generated one and reused: one pass finds where each hour's run
 * of lines starts, a second writes the runs in the wanted order, each run read whole (an hour is a
 * few megabytes even at 10M records), so memory stays flat whatever the file's size.
 */
import fs from 'node:fs';
import type { BenchFile } from './data.ts';

export const ORDERS = ['newest', 'oldest', 'shuffled'] as const;
export type RecordOrder = (typeof ORDERS)[number];

const HOUR_US = 3_600_000_000;
const CHUNK = 8 * 1024 * 1024;
const TS = /"timestamp":(\d+)/;

/** Reads `--order` (a comma-separated list of ORDERS). */
export function readOrders(text: string): RecordOrder[] {
  const out = text.split(',').map((s) => s.trim());
  for (const o of out) if (!(ORDERS as readonly string[]).includes(o)) throw new Error(`--order takes ${ORDERS.join(', ')}; not ${o}`);
  return out as RecordOrder[];
}

/** Byte ranges of the file's runs of lines in one hour, in file order. */
function hourRuns(file: string): Array<{ start: number; end: number; hour: number }> {
  const runs: Array<{ start: number; end: number; hour: number }> = [];
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let pos = 0;
    let carry = Buffer.alloc(0);
    for (;;) {
      const n = fs.readSync(fd, buf, 0, CHUNK, pos);
      if (n === 0) break;
      const data = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      const base = pos - carry.length;
      let at = 0;
      for (let nl = data.indexOf(10, at); nl >= 0; nl = data.indexOf(10, at)) {
        // The timestamp is near the start of each line (after the id).
        const m = TS.exec(data.toString('latin1', at, Math.min(nl, at + 200)));
        if (!m) throw new Error(`${file}: no numeric timestamp near byte ${base + at}`);
        const hour = Math.floor(Number(m[1]) / HOUR_US);
        const last = runs[runs.length - 1];
        if (last && last.hour === hour) last.end = base + nl + 1;
        else runs.push({ start: base + at, end: base + nl + 1, hour });
        at = nl + 1;
      }
      carry = Buffer.from(data.subarray(at));
      pos += n;
    }
    if (carry.length) throw new Error(`${file}: the last line has no newline`);
  } finally {
    fs.closeSync(fd);
  }
  return runs;
}

/** A deterministic shuffle (the same file every run). */
function shuffle<T>(items: T[], seed: number): T[] {
  let s = seed >>> 0 || 1;
  for (let i = items.length - 1; i > 0; i--) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    const j = (s >>> 0) % (i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/**
 * The bench file with its records in `order`: the generated file itself when it already is
 * (the generator writes newest first), else a file derived from it next to it, written once.
 */
export function orderedFile(file: BenchFile, order: RecordOrder): BenchFile {
  const runs = hourRuns(file.path);
  const newestFirst = runs.length < 2 || runs[0]!.hour > runs[runs.length - 1]!.hour;
  if ((order === 'newest' && newestFirst) || (order === 'oldest' && !newestFirst)) return file;
  const target = file.path.replace(/\.ndjson$/, `.${order}.ndjson`);
  if (!fs.existsSync(target)) {
    const t = performance.now();
    const wantNewestFirst = order === 'newest' || (order === 'shuffled' && newestFirst);
    const fd = fs.openSync(file.path, 'r');
    const out = fs.openSync(`${target}.tmp`, 'w');
    try {
      const list = wantNewestFirst === newestFirst ? runs : [...runs].reverse();
      for (const run of list) {
        const bytes = Buffer.allocUnsafe(run.end - run.start);
        fs.readSync(fd, bytes, 0, bytes.length, run.start);
        const lines = bytes.toString('utf8').split('\n');
        lines.pop(); // after the last newline
        const ordered = order === 'shuffled' ? shuffle(lines, run.hour) : wantNewestFirst === newestFirst ? lines : lines.reverse();
        fs.writeSync(out, `${ordered.join('\n')}\n`);
      }
    } finally {
      fs.closeSync(fd);
      fs.closeSync(out);
    }
    fs.renameSync(`${target}.tmp`, target);
    console.error(`wrote ${target} (${order}) in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  return { ...file, path: target, bytes: fs.statSync(target).size };
}
