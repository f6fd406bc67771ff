import { describe, expect, it } from 'vitest';
import { API_FAMILIES, familiesOf, FUNCTION_INTERVALS, isTier, TIERS, USAGE_INTERVALS } from './registry.ts';

describe('the names the pages keep in their URLs', () => {
  it('are the registry’s intervals and tiers, in its order', () => {
    expect(FUNCTION_INTERVALS).toEqual(['5min', '15min', '1hr', '1day', '7day']);
    expect(USAGE_INTERVALS).toEqual(['hourly', 'daily', 'minutely']);
    expect(TIERS).toEqual(['FREE', 'PRO', 'PAYG', 'ENTERPRISE']);
    expect(isTier('PAYG')).toBe(true);
    expect(isTier('free')).toBe(false);
  });
});

describe('the API families', () => {
  it('one bit each, in the order of the result columns', () => {
    expect(API_FAMILIES.map((f) => [f.key, f.bit, f.column])).toEqual([
      ['rest', 1, 'total_rest_requests'],
      ['storage', 2, 'total_storage_requests'],
      ['auth', 4, 'total_auth_requests'],
      ['realtime', 8, 'total_realtime_requests'],
    ]);
  });

  it('a path counts in every family whose string it contains, anywhere in it', () => {
    expect(familiesOf('/rest/v1/todos')).toBe(1);
    expect(familiesOf('/storage/v1/object/a.png')).toBe(2);
    expect(familiesOf('/auth/v1/token')).toBe(4);
    expect(familiesOf('/realtime/v1/websocket')).toBe(8);
    // "/rest" at the start and "/realtime" inside "/rpc/realtime_…": REST (1) and realtime (8).
    expect(familiesOf('/rest/v1/rpc/realtime_presence_sync')).toBe(1 + 8);
    expect(familiesOf('/functions/v1/hello')).toBe(0);
  });
});
