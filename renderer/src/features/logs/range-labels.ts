import type { RangeChoice } from '../../lib/logs-range.ts';

export const RANGE_LABELS: Record<RangeChoice, string> = {
  '15m': '15 min',
  '1h': '1 h',
  '3h': '3 h',
  '24h': '24 h',
  '7d': '7 days',
  custom: 'Custom',
};
