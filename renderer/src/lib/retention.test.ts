import { describe, expect, it } from 'vitest';
import { MICROS } from '../../../contract/instants.ts';
import { logsParams, longestTier, retentionCut, type RetentionRules, tierCovering } from './retention.ts';
import { resolveRange } from './logs-range.ts';

const NOW = 1773500966535897;

describe('ranges and retention', () => {
  it('a preset ends at the server now', () => {
    expect(resolveRange('1h', NOW)).toEqual({ start: NOW - MICROS.hour, end: NOW });
  });
  it('params carry µs-precision ISO bounds', () => {
    expect(logsParams('p', 'PRO', { start: NOW - MICROS.hour, end: NOW })).toEqual({
      project: 'p',
      project_tier: 'PRO',
      iso_timestamp_start: '2026-03-14T14:09:26.535897Z',
      iso_timestamp_end: '2026-03-14T15:09:26.535897Z',
    });
  });
  // The registry's listing as GET /api/endpoints gives it (logs.all: FREE 1 day, PRO 7, PAYG/ENTERPRISE 90).
  const RULES: RetentionRules = { retentionUs: { FREE: 86_400_000_000, PRO: 604_800_000_000, PAYG: 7_776_000_000_000, ENTERPRISE: 7_776_000_000_000 }, fallback: 'FREE' };
  const DAY = 86_400_000_000;
  it('a 1-day retention cuts a 7-day range, a 7-day one does not', () => {
    const r = resolveRange('7d', NOW);
    expect(retentionCut(DAY, NOW, r)).toEqual({ kind: 'partial', cutoff: NOW - DAY });
    expect(retentionCut(7 * DAY, NOW, r)).toEqual({ kind: 'none' });
  });
  it('a range wholly before the cutoff is cut entirely', () => {
    expect(retentionCut(DAY, NOW, { start: NOW - 3 * DAY, end: NOW - 2 * DAY })).toEqual({ kind: 'all', cutoff: NOW - DAY });
  });
  it('an open start is always cut by retention', () => {
    expect(retentionCut(90 * DAY, NOW, {}).kind).toBe('partial');
  });
  it('tierCovering keeps the preferred tier when it covers, else the listed tier with the shortest retention that does', () => {
    expect(tierCovering(RULES, NOW - MICROS.hour, NOW, 'FREE')).toBe('FREE');
    expect(tierCovering(RULES, NOW - 3 * DAY, NOW, 'FREE')).toBe('PRO');
    expect(tierCovering(RULES, NOW - 30 * DAY, NOW, 'PRO')).toBe('PAYG');
    // FREE, custom range 12 days back: PRO keeps 7 days, so PAYG is the one that covers.
    expect(tierCovering(RULES, NOW - 12 * DAY, NOW, 'FREE')).toBe('PAYG');
    expect(tierCovering(RULES, NOW - 91 * DAY, NOW, 'FREE')).toBeNull();
    expect(longestTier(RULES)).toEqual({ tier: 'PAYG', retentionUs: 90 * DAY });
  });
  it('the rules decide, not the names: a listing with other retentions gives other answers', () => {
    const other: RetentionRules = { retentionUs: { FREE: 2 * DAY, PRO: 30 * DAY }, fallback: 'FREE' };
    expect(tierCovering(other, NOW - 3 * DAY, NOW, 'FREE')).toBe('PRO');
    expect(tierCovering(other, NOW - 31 * DAY, NOW, 'FREE')).toBeNull();
    // An unlisted tier behaves as the fallback.
    expect(tierCovering(other, NOW - DAY, NOW, 'PAYG')).toBe('PAYG');
  });
});

/**
 * logs.all over an in-memory list, written from its rules: records with timestamp ≤ end, newest
 * first, ties by id ascending, the first `size`.
 */
