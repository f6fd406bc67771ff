/**
 * Dates at their edges. Years 0001–9999 are read exactly (never as 19xx);
 * the clock and time parameters take 1700–2199, where µs in a number are exact; imports keep
 * records dated 2000–2099 and report the rest per line; a backwards range is a 400.
 * Epoch values are written as literals computed outside this code (Python's datetime).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../queries/registry.ts';
import { edgeRecord, importRecords, makeTestApp, NOW, type TestApp } from '../testing/fixtures.ts';
import { P, realServer, type RealServer } from './helpers.ts';

let t: TestApp | undefined;
let s: RealServer | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  await s?.stop();
  s = undefined;
});

interface Envelope {
  error: { code: number; message: string; errors: Array<{ reason: string; location?: string; message: string }> };
}
interface ClockBody {
  result: { mode: string; now: number; iso: string; fixed?: number; fixedIso?: string };
}

async function errorOf(res: Response) {
  expect(res.status).toBe(400);
  return ((await res.json()) as Envelope).error;
}

const putClock = (body: unknown) => t!.request('/api/clock', { method: 'PUT', body: JSON.stringify(body) });
const logsAll = (extra: Record<string, string>) =>
  t!.request(`/api/endpoints/logs.all?${new URLSearchParams({ project: P, project_tier: 'FREE', ...extra })}`);

describe('PUT /api/clock', () => {
  it('the ends of 1700–2199 are accepted and echoed exactly', async () => {
    t = await makeTestApp();
    const first = (await (await putClock({ mode: 'fixed', now: '1700-01-01T00:00:00Z' })).json()) as ClockBody;
    expect(first.result).toMatchObject({ mode: 'fixed', now: -8_520_336_000_000_000, iso: '1700-01-01T00:00:00.000000Z' });
    const last = (await (await putClock({ mode: 'fixed', now: '2199-12-31T23:59:59.999999Z' })).json()) as ClockBody;
    expect(last.result).toMatchObject({ mode: 'fixed', now: 7_258_118_399_999_999, iso: '2199-12-31T23:59:59.999999Z' });
    // What GET answers, PUT takes back unchanged.
    const got = (await (await t.request('/api/clock')).json()) as ClockBody;
    const again = (await (await putClock({ mode: 'fixed', now: got.result.iso })).json()) as ClockBody;
    expect(again.result.now).toBe(7_258_118_399_999_999);
  });

  it('0001, 9999, year 0000, +010000 and 10 fraction digits are a 400 naming now, and the clock stays', async () => {
    t = await makeTestApp();
    for (const now of [
      '0001-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999999Z',
      '0000-01-01T00:00:00Z',
      '+010000-01-01T00:00:00.000000Z',
      '2200-01-01T00:00:00Z',
      '1699-12-31T23:59:59.999999Z',
      '2026-01-01T00:00:00.1234567891Z',
    ]) {
      const e = await errorOf(await putClock({ mode: 'fixed', now }));
      expect(e.errors.map((d) => d.location), now).toEqual(['now']);
      expect(t.clock.now()).toBe(NOW);
    }
  });
});

describe('iso_timestamp_start / iso_timestamp_end', () => {
  it('a valid ISO instant outside 1700–2199 is a 400 naming the parameter and the range', async () => {
    t = await makeTestApp();
    for (const [name, v] of [
      ['iso_timestamp_start', '0001-01-01T00:00:00Z'],
      ['iso_timestamp_end', '9999-12-31T23:59:59.999999Z'],
      ['iso_timestamp_end', '2200-01-01T00:00:00Z'],
      ['iso_timestamp_start', '1699-12-31T23:59:59.999999Z'],
    ] as const) {
      const e = await errorOf(await logsAll({ [name]: v }));
      expect(e.errors).toEqual([
        { reason: 'invalid', location: name, message: `${name} is outside the supported range 1700-01-01T00:00:00Z to 2199-12-31T23:59:59.999999Z: ${v}` },
      ]);
    }
  });

  it('year 0000, 5-digit years and 10 fraction digits are not ISO timestamps', async () => {
    t = await makeTestApp();
    for (const v of ['0000-01-01T00:00:00Z', '10000-01-01T00:00:00Z', '+010000-01-01T00:00:00Z', '2026-11-22T10:00:00.1234567891Z']) {
      const e = await errorOf(await logsAll({ iso_timestamp_end: v }));
      expect(e.errors[0]).toMatchObject({ location: 'iso_timestamp_end', message: `iso_timestamp_end is not an ISO 8601 timestamp: ${v}` });
    }
    // 9 digits are fine.
    expect((await logsAll({ iso_timestamp_end: '2026-11-22T10:00:00.123456789Z' })).status).toBe(200);
  });

  it('the widest range, 1700 to 2199, finds the record', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 1000, { id: 'only' })] });
    const res = await logsAll({ iso_timestamp_start: '1700-01-01T00:00:00Z', iso_timestamp_end: '2199-12-31T23:59:59.999999Z' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: Array<{ id: string }> }).result.map((r) => r.id)).toEqual(['only']);
  });

  it('start after end is a 400 naming iso_timestamp_start, also by one µs or through offsets', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 1000, { id: 'only' })] });
    for (const [start, end] of [
      ['2026-11-22T10:00:00Z', '2026-11-21T10:00:00Z'],
      ['2026-11-22T10:00:00.000001Z', '2026-11-22T10:00:00Z'],
      // 10:01Z after 10:00Z, though the text sorts the other way.
      ['2026-11-22T10:00:00-00:01', '2026-11-22T10:00:00Z'],
      ['2199-12-31T23:59:59.999999Z', '1700-01-01T00:00:00Z'],
    ]) {
      const e = await errorOf(await logsAll({ iso_timestamp_start: start!, iso_timestamp_end: end! }));
      expect(e.errors, `${start} ${end}`).toEqual([{ reason: 'invalid', location: 'iso_timestamp_start', message: 'iso_timestamp_start is after iso_timestamp_end' }]);
    }
  });

  it('equal ends are an empty range, not an error; either end alone is fine', async () => {
    t = await makeTestApp({ edge: [edgeRecord(NOW - 1000, { id: 'only' })] });
    // 12:00+02:00 is 10:00Z: the same instant written two ways.
    const same = await logsAll({ iso_timestamp_start: '2026-11-22T12:00:00+02:00', iso_timestamp_end: '2026-11-22T10:00:00Z' });
    expect(same.status).toBe(200);
    expect(((await same.json()) as { result: unknown[] }).result).toEqual([]);
    expect((await logsAll({ iso_timestamp_start: '2199-12-31T23:59:59.999999Z' })).status).toBe(200);
    expect((await logsAll({ iso_timestamp_end: '1700-01-01T00:00:00Z' })).status).toBe(200);
  });

  it('every endpoint with both ends checks their order', async () => {
    t = await makeTestApp();
    const both = ENDPOINTS.filter((d) => ['iso_timestamp_start', 'iso_timestamp_end'].every((n) => d.params.some((p) => p.name === n)));
    expect(both.length).toBeGreaterThan(0);
    for (const def of both) {
      const params: Record<string, string> = { iso_timestamp_start: '2026-11-22T10:00:00Z', iso_timestamp_end: '2026-11-22T09:00:00Z' };
      for (const p of def.params) if (!(p.name in params)) params[p.name] = p.allowed?.[0] ?? P;
      const e = await errorOf(await t.request(`/api/endpoints/${def.name}?${new URLSearchParams(params)}`));
      expect(e.errors.map((d) => d.location), def.name).toEqual(['iso_timestamp_start']);
    }
  });
});

describe('imports keep records dated 2000–2099', () => {
  const REASON = 'is outside the accepted range 2000-01-01T00:00:00Z to 2099-12-31T23:59:59.999999Z';

  it('rejects each record outside per line, naming the range; keeps the ends', async () => {
    t = await makeTestApp();
    const stamps: Array<[unknown, boolean]> = [
      ['0001-01-01T00:00:00Z', false],
      ['0099-12-31T23:59:59Z', false],
      ['1901-01-01T00:00:00Z', false],
      ['1999-12-31T23:59:59.999999Z', false],
      ['2000-01-01T00:00:00Z', true],
      ['2099-12-31T23:59:59.999999Z', true],
      ['2100-01-01T00:00:00Z', false],
      ['9999-12-31T23:59:59.999999Z', false],
      [946_684_799, false], // 1999-12-31T23:59:59Z in seconds
      [946_684_800, true],
      [4_102_444_799_999, true], // 2099-12-31T23:59:59.999Z in ms
      [4_102_444_800_000, false],
      ['4102444800000000', false], // 2100-01-01 in µs, as a CSV-style digit string
      ['946684800000000000', true], // 2000-01-01 in ns
      [99_999_999_999, false], // 11-digit seconds: year 5138
    ];
    const report = await importRecords(
      t.store,
      'edge_logs',
      stamps.map(([timestamp], i) => ({ ...edgeRecord(0, { id: `r${i}` }), timestamp })),
    );
    expect(report.imported).toBe(stamps.filter(([, ok]) => ok).length);
    expect(report.rejected).toBe(stamps.filter(([, ok]) => !ok).length);
    const expected = stamps.flatMap(([ts, ok], i) => (ok ? [] : [{ line: i + 1, reason: `timestamp ${JSON.stringify(ts)} ${REASON}` }]));
    expect(report.errors).toEqual(expected);
    const [summary] = t.store.summary().filter((x) => x.maxTimestamp !== null);
    expect(summary).toMatchObject({ minTimestamp: 946_684_800_000_000, maxTimestamp: 4_102_444_799_999_999 });
  });

  it("the 'latest' clock stays on the newest accepted record, not on a 9999 placeholder", async () => {
    s = await realServer();
    await importRecords(s.store, 'edge_logs', [
      { ...edgeRecord(0, { id: 'real' }), timestamp: '2026-11-22T10:00:00.123456Z' },
      { ...edgeRecord(0, { id: 'placeholder' }), timestamp: '9999-12-31T23:59:59.999999Z' },
      { ...edgeRecord(0, { id: 'next-century' }), timestamp: 4_102_444_800_000 }, // 2100-01-01 in ms
    ]);
    s.clock.set('latest');
    expect(s.clock.now()).toBe(1_795_341_600_123_456); // 2026-11-22T10:00:00.123456Z
  });
});
