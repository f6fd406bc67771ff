/**
 * Routing one raw record (route-record.ts): a row of ClickHouse's `logs` table told from a
 * BigQuery-era record by content, CSV rows of both forms read as rows, the source each goes to,
 * and the import's own source from the first records. Expected values are written out by hand.
 */
import { describe, expect, it } from 'vitest';
import { sourceInfo } from '../sources.ts';
import { sourceOfClickHouse } from './clickhouse-shape.ts';
import { normalizeRecord } from './normalize.ts';
import { importSources, isLogsRow, logsRowOfCsv, routeRecord } from './route-record.ts';

const EDGE = sourceInfo('cloudflare.logs.prod');
const PG = sourceInfo('postgres.logs');
const FN = sourceInfo('deno-relay-logs');
const P = 'abcdefghijklmnopqrst';
// 2026-06-22T09:34:06.215000Z: day 20626 since 1970-01-01.
const TS = (20626 * 86_400 + 9 * 3600 + 34 * 60 + 6) * 1_000_000 + 215_000;

describe('isLogsRow', () => {
  it('a logs row has log_attributes or severity_text and no metadata; a CSV one may instead have a source column or dotted columns', () => {
    expect(isLogsRow({ timestamp: 1, log_attributes: {} })).toBe(true);
    expect(isLogsRow({ timestamp: 1, severity_text: 'INFO', source: 'edge_log' })).toBe(true);
    expect(isLogsRow({ timestamp: 1, metadata: {}, severity_text: 'INFO' })).toBe(false);
    expect(isLogsRow({ timestamp: 1, source: 'edge_logs' })).toBe(false);
    expect(isLogsRow({ timestamp: '1', source: 'edge_logs' }, true)).toBe(true);
    expect(isLogsRow({ timestamp: '1', 'request.method': 'GET' }, true)).toBe(true);
    expect(isLogsRow({ timestamp: '1', metadata: '', 'request.method': 'GET' }, true)).toBe(false);
    expect(isLogsRow({ timestamp: '1', project: P, event_message: 'x' }, true)).toBe(false);
    expect(isLogsRow(42)).toBe(false);
  });
});

describe('logsRowOfCsv', () => {
  it('one column per key: every column but the six of the table is an attribute; empty cells are keys the row lacks', () => {
    expect(logsRowOfCsv({ id: 'a', timestamp: 't', event_message: '', severity_text: 'INFO', source: 'edge_logs', 'request.method': 'GET', function_id: '', project: P })).toEqual({
      row: { id: 'a', timestamp: 't', severity_text: 'INFO', source: 'edge_logs', log_attributes: { 'request.method': 'GET', project: P } },
    });
  });

  it('with a log_attributes column, the other columns are kept as they are', () => {
    expect(logsRowOfCsv({ id: 'a', timestamp: 't', log_attributes: '{"x":"1"}', project: P })).toEqual({ row: { id: 'a', timestamp: 't', log_attributes: '{"x":"1"}', project: P } });
  });

  it('a NUL byte in a cell is refused; a __proto__ column stays an own key', () => {
    expect(logsRowOfCsv({ id: 'a\u0000', timestamp: 't', source: 'edge_logs' })).toEqual({ error: 'contains a NUL byte' });
    const r = logsRowOfCsv(JSON.parse('{"timestamp":"t","__proto__":"x"}') as Record<string, string>);
    if ('error' in r) throw new Error(r.error);
    expect(Object.hasOwn(r.row.log_attributes as object, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('routeRecord', () => {
  const row = (o: Record<string, unknown> = {}) => ({ id: 'r1', timestamp: '2026-06-22T09:34:06.215000', event_message: 'm', severity_text: 'INFO', source: 'edge_logs', log_attributes: { 'response.status_code': '404' }, ...o });

  it('a row goes to the source it names, rebuilt in the ingest shape, with no CSV text or line bytes kept', () => {
    expect(routeRecord(row(), false, Buffer.from('{}'), { classic: PG })).toEqual({
      source: EDGE,
      fromCsv: false,
      value: { id: 'r1', timestamp: TS, event_message: 'm', metadata: { response: { status_code: 404 } } },
    });
  });

  it('a BigQuery-era record goes to the import source, as it came', () => {
    const raw = Buffer.from('{"id":"x"}');
    expect(routeRecord({ id: 'x', timestamp: 1 }, false, raw, { classic: PG })).toEqual({ source: PG, value: { id: 'x', timestamp: 1 }, fromCsv: false, raw });
    expect(routeRecord({ id: 'x', timestamp: 1 }, false, undefined, {})).toEqual({ error: 'cannot tell the source of this record from its shape; give the import a source (name or alias)' });
    expect(routeRecord('text', false, undefined, { classic: PG })).toEqual({ error: 'not a JSON object' });
  });

  it('a source given: a row naming another is refused (counted under the one it names); one naming none, or the same by another name, takes it', () => {
    expect(routeRecord(row({ source: 'postgres_logs' }), false, undefined, { given: EDGE })).toEqual({
      error: 'source "postgres_logs" is stored in postgres.logs, not in cloudflare.logs.prod, the source this import was given; import the file without a source to store each row in its own',
      source: PG,
    });
    expect(routeRecord(row({ source: undefined }), false, undefined, { given: EDGE })).toMatchObject({ source: EDGE });
    expect(routeRecord(row({ source: 'CLOUDFLARE.logs.prod' }), false, undefined, { given: EDGE })).toMatchObject({ source: EDGE });
  });

  it('a file name: the source of rows naming none, never of rows naming one', () => {
    expect(routeRecord(row({ source: '' }), false, undefined, { named: FN })).toMatchObject({ source: FN });
    expect(routeRecord(row(), false, undefined, { named: FN })).toMatchObject({ source: EDGE });
    expect(routeRecord(row({ source: 7 }), false, undefined, { named: FN })).toEqual({ error: 'source is not text' });
  });

  it('a CSV row with one column per dotted key', () => {
    const cells = { id: 'c1', timestamp: '2026-06-22 09:34:06.215', event_message: 'x', severity_text: 'ERROR', source: 'postgres_logs', 'parsed.process_id': '12', 'request.method': '' };
    expect(routeRecord(cells, true, undefined, {})).toEqual({
      source: PG,
      fromCsv: false,
      value: { id: 'c1', timestamp: TS, event_message: 'x', metadata: { parsed: { process_id: 12, error_severity: 'ERROR' } } },
    });
  });
});

describe('clickhouse-shape fixes', () => {
  it('source names that are members of every object are unknown sources, not a crash', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) expect(sourceOfClickHouse(name)).toBeUndefined();
    expect(routeRecord({ timestamp: '2026-06-22T09:34:06', severity_text: 'x', source: '__proto__', log_attributes: {} }, false, undefined, {})).toEqual({
      error: expect.stringMatching(/^unknown source "__proto__"; expected one of edge_logs, /),
    });
  });

  it('a timestamp outside the accepted range is reported as the file wrote it, not as a µs count', () => {
    const routed = routeRecord({ id: 'old', timestamp: '1969-07-20T20:17:40.000000', severity_text: 'INFO', source: 'edge_logs', log_attributes: {} }, false, undefined, {});
    if ('error' in routed) throw new Error(routed.error);
    expect(normalizeRecord(routed.value, routed.source, P)).toEqual({
      error: 'timestamp "1969-07-20T20:17:40.000000" is outside the accepted range 2000-01-01T00:00:00Z to 2099-12-31T23:59:59.999999Z',
    });
  });
});

describe('importSources', () => {
  const logsRow = (source?: string) => ({ value: { timestamp: 't', severity_text: 'INFO', ...(source !== undefined ? { source } : {}) } });
  const bigQueryFn = { value: { timestamp: 1, metadata: { function_id: 'f', execution_time_ms: 1 } } };

  it('given wins for both', () => {
    expect(importSources([logsRow('postgres_logs'), bigQueryFn], EDGE, FN)).toEqual({ primary: EDGE, classic: EDGE });
  });

  it('a file starting with logs rows: the source of the first row that can be stored; BigQuery-era records: the name, else their shape', () => {
    expect(importSources([logsRow('nope'), logsRow('postgres_logs'), bigQueryFn], undefined, undefined)).toEqual({ primary: PG, classic: FN });
    expect(importSources([logsRow(), logsRow('postgres_logs')], undefined, EDGE)).toEqual({ primary: EDGE, classic: EDGE });
    expect(importSources([logsRow(), logsRow('nope')], undefined, undefined)).toEqual({ classic: undefined });
  });

  it('a file starting with BigQuery-era records: as before (name, else the first record)', () => {
    expect(importSources([bigQueryFn, logsRow('postgres_logs')], undefined, undefined)).toEqual({ primary: FN, classic: FN });
    expect(importSources([bigQueryFn], undefined, EDGE)).toEqual({ primary: EDGE, classic: EDGE });
    expect(importSources([], undefined, undefined)).toEqual({ primary: undefined, classic: undefined });
  });
});
