/** Number formatting: fixed en-US grouping so figures read the same everywhere (and in tests). */

const intFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** `12,345` */
export function formatInt(n: number): string {
  return intFmt.format(n);
}

/** `1.2k`, `3.4M`: for axis ticks only; exact numbers elsewhere. */
export function formatCompact(n: number): string {
  const a = Math.abs(n);
  if (a >= 1e9) return `${trim(n / 1e9)}B`;
  if (a >= 1e6) return `${trim(n / 1e6)}M`;
  if (a >= 1e4) return `${trim(n / 1e3)}k`;
  return formatInt(n);
}

function trim(n: number): string {
  return n.toFixed(1).replace(/\.0$/, '');
}

/**
 * Milliseconds with decimals that match their size: `0.42 ms`, `8.25 ms`, `42.5 ms`,
 * `1,234 ms`; `—` for null (an empty bucket has no execution time).
 */
export function formatMs(ms: number | null | undefined, withUnit = true): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const a = Math.abs(ms);
  const digits = a === 0 ? 0 : a < 10 ? 2 : a < 100 ? 1 : 0;
  const text = new Intl.NumberFormat('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(ms);
  return withUnit ? `${text} ms` : text;
}

/** `4.17 %`; `—` for null. */
export function formatPercent(ratio: number | null): string {
  if (ratio === null || !Number.isFinite(ratio)) return '—';
  const pct = ratio * 100;
  const digits = pct === 0 || pct >= 10 ? 1 : 2;
  return `${pct.toFixed(digits)} %`;
}

/** `1.5 MB` */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i += 1;
  }
  return `${v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`;
}

/** Axis ticks in ms: `0.1`, `10`, `1k`, `2.5k`, `10k`; short enough for a narrow axis. */
export function formatAxisMs(ms: number): string {
  if (ms > 0 && ms < 1) return String(Number(ms.toPrecision(2)));
  if (Math.abs(ms) >= 1000 && Math.abs(ms) < 1e6) return `${trim(ms / 1000)}k`;
  return formatCompact(Math.round(ms));
}
