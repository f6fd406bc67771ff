/**
 * logs.all's tiers (named in contract/registry.ts) and their retention (read from
 * `GET /api/endpoints`): which tier covers a range, where retention cuts it, and the
 * endpoint's query parameters.
 */
import { formatIsoMicros } from '../../../contract/instants.ts';
import { isTier, type Tier } from '../../../contract/registry.ts';
import type { LogsRange } from './logs-range.ts';

/** logs.all's retention rules as the registry lists them (api/rules.ts `LogsAllRules` has this shape). */
export interface RetentionRules {
  /** Retention per tier, µs: records strictly newer than now − retention are returned. */
  retentionUs: Readonly<Record<string, number>>;
  /** The tier any other name behaves as. */
  fallback: string;
}

/** A tier's retention under the rules (an unlisted tier gets the fallback's, as the server answers it). */
export function retentionOf(rules: RetentionRules, tier: string): number | undefined {
  return rules.retentionUs[tier] ?? rules.retentionUs[rules.fallback];
}

/** The listed tiers a Logs URL can name, in the listing's order, with their retention. */
export function listedTiers(rules: RetentionRules): Array<{ tier: Tier; retentionUs: number }> {
  return Object.entries(rules.retentionUs)
    .filter((e): e is [Tier, number] => isTier(e[0]))
    .map(([tier, retentionUs]) => ({ tier, retentionUs }));
}

/** The logs.all query parameters for a project, tier and range (ISO with microseconds). */
export function logsParams(project: string, tier: Tier, range: LogsRange): Record<string, string> {
  const p: Record<string, string> = { project, project_tier: tier };
  if (range.start !== undefined) p.iso_timestamp_start = formatIsoMicros(range.start);
  if (range.end !== undefined) p.iso_timestamp_end = formatIsoMicros(range.end);
  return p;
}

export type RetentionCut =
  | { kind: 'none' }
  /** Part of the range is older than the cutoff. */
  | { kind: 'partial'; cutoff: number }
  /** The whole range is older than the cutoff: nothing can come back. */
  | { kind: 'all'; cutoff: number };

/** Whether a retention (records must be newer than now − retention) cuts the range. */
export function retentionCut(retentionUs: number, now: number, range: LogsRange): RetentionCut {
  const cutoff = now - retentionUs;
  if (range.end !== undefined && range.end <= cutoff) return { kind: 'all', cutoff };
  if (range.start === undefined || range.start < cutoff) return { kind: 'partial', cutoff };
  return { kind: 'none' };
}

/**
 * The tier to query a range starting at `start` with: the preferred one when its retention
 * covers the start, else the listed tier with the shortest retention that does; null when none
 * does (the range starts before the longest retention).
 */
export function tierCovering(rules: RetentionRules, start: number, now: number, preferred: Tier): Tier | null {
  const covers = (retention: number | undefined) => retention !== undefined && start >= now - retention;
  if (covers(retentionOf(rules, preferred))) return preferred;
  let best: { tier: Tier; retentionUs: number } | null = null;
  for (const t of listedTiers(rules)) if (covers(t.retentionUs) && (best === null || t.retentionUs < best.retentionUs)) best = t;
  return best?.tier ?? null;
}

/** The listed tier with the longest retention (what a range older than every tier is told about). */
export function longestTier(rules: RetentionRules): { tier: Tier; retentionUs: number } | null {
  let best: { tier: Tier; retentionUs: number } | null = null;
  for (const t of listedTiers(rules)) if (best === null || t.retentionUs > best.retentionUs) best = t;
  return best;
}
