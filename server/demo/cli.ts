/**
 * `npm run demo-data -- --out DIR --now ISO [--records N] [--seed S]`
 *
 * Writes the demo data set (see demo-set.ts) and prints what it wrote. Importing this module
 * has no side effects; the CLI runs only when this file is the entry point.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { writeDemoSet } from './demo-set.ts';

export { writeDemoSet, type DemoSetOptions, type DemoSetSummary } from './demo-set.ts';

const USAGE = 'usage: npm run demo-data -- --out DIR --now ISO [--records N] [--seed S]';

export interface CliArgs {
  out: string;
  /** Integer microseconds UTC. */
  now: number;
  records: number;
  seed: number;
}

/** Parses the CLI flags; throws an Error with a message fit for the user. */
export function parseCliArgs(argv: readonly string[]): CliArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      out: { type: 'string' },
      now: { type: 'string' },
      records: { type: 'string' },
      seed: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (!values.out) throw new Error('--out DIR is required');
  if (!values.now) throw new Error('--now ISO is required (e.g. --now 2026-11-22T10:00:00Z)');
  // Date keeps milliseconds only; enough for choosing "now" of a demo set.
  const ms = Date.parse(values.now);
  if (Number.isNaN(ms)) throw new Error(`--now: not an ISO 8601 date-time: ${values.now}`);
  const integer = (name: string, text: string | undefined, fallback: number, min: number): number => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < min) throw new Error(`--${name}: expected an integer >= ${min}, got ${text}`);
    return n;
  };
  return {
    out: resolve(values.out),
    now: ms * 1000,
    records: integer('records', values.records, 10_000, 0),
    seed: integer('seed', values.seed, 1, Number.MIN_SAFE_INTEGER),
  };
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

async function main(): Promise<void> {
  let args: CliArgs;
  try {
    args = parseCliArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const started = performance.now();
  const summary = await writeDemoSet(args.out, { now: args.now, records: args.records, seed: args.seed });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const perSource = summary.files.filter((f) => !f.file.startsWith('variants/'));
  const variants = summary.files.filter((f) => f.file.startsWith('variants/'));
  console.log(`demo data in ${args.out} (now ${new Date(args.now / 1000).toISOString()}, seed ${args.seed})`);
  for (const f of perSource) console.log(`  ${f.file.padEnd(28)} ${String(f.records).padStart(9)} records  ${formatBytes(f.bytes).padStart(10)}`);
  const vBytes = variants.reduce((n, f) => n + f.bytes, 0);
  console.log(`  variants/ ${String(variants.length).padStart(3)} files of ${variants[0]?.records ?? 0} edge records each  ${formatBytes(vBytes).padStart(10)}`);
  console.log(`total: ${summary.files.length} files, ${summary.records} records, ${formatBytes(summary.bytes)} in ${seconds} s`);
}

const entry = process.argv[1];
if (entry && import.meta.url === pathToFileURL(resolve(entry)).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
