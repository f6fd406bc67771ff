import { describe, expect, it } from 'vitest';
import { sourceInfo } from '../sources.ts';
import { clickHouseSourceOf, flattenToAttributes, fromClickHouseRow, isClickHouseRow, nestDottedKeys, sourceOfClickHouse, toClickHouseRow } from './clickhouse-shape.ts';
import { normalizeRecord } from './normalize.ts';

// 2026-06-22T09:34:06.215000Z in µs, worked out by hand: 2026-06-22 is day 20626 since 1970-01-01.
const TS_TEXT = '2026-06-22T09:34:06.215000';
const TS = (20626 * 86_400 + 9 * 3600 + 34 * 60 + 6) * 1_000_000 + 215_000;

describe('fromClickHouseRow', () => {
  it('an edge row: nested metadata from dotted keys, status code and numbers typed, severity_text not kept (edge logs have no level)', () => {
    const out = fromClickHouseRow({
      id: 'e1',
      timestamp: TS_TEXT,
      event_message: 'GET | 200 | https://abcdefghijklmnopqrst.supabase.co/rest/v1/todos',
      severity_text: 'INFO',
      source: 'edge_logs',
      log_attributes: {
        'request.method': 'GET',
        'request.url': 'https://abcdefghijklmnopqrst.supabase.co/rest/v1/todos',
        'request.cf.asn': '13335',
        'request.cf.country': 'DE',
        'request.cf.postalCode': '10115',
        'request.cf.latitude': '52.52437',
        'request.cf.botManagement.verifiedBot': 'false',
        'response.status_code': '200',
        'response.origin_time': '12.5',
      },
    });
    expect(out).toEqual({
      source: sourceInfo('cloudflare.logs.prod'),
      record: {
        id: 'e1',
        timestamp: TS,
        event_message: 'GET | 200 | https://abcdefghijklmnopqrst.supabase.co/rest/v1/todos',
        metadata: {
          request: {
            method: 'GET',
            url: 'https://abcdefghijklmnopqrst.supabase.co/rest/v1/todos',
            // postalCode and latitude are text in the BigQuery-era records too.
            cf: { asn: 13335, country: 'DE', postalCode: '10115', latitude: '52.52437', botManagement: { verifiedBot: false } },
          },
          response: { status_code: 200, origin_time: 12.5 },
        },
      },
    });
  });

  it('a function edge row: execution_time_ms and status_code as numbers, project_ref kept where the source keeps its project', () => {
    const out = fromClickHouseRow({
      id: 'f1',
      timestamp: '2026-06-22T09:34:06.000001',
      event_message: 'POST | 500 | hello',
      severity_text: 'ERROR',
      source: 'function_edge_logs',
      log_attributes: { function_id: 'fn-1', execution_time_ms: '41', 'response.status_code': '500', project_ref: 'abcdefghijklmnopqrst' },
    });
    expect(out).toEqual({
      source: sourceInfo('deno-relay-logs'),
      record: {
        id: 'f1',
        timestamp: TS - 215_000 + 1,
        event_message: 'POST | 500 | hello',
        metadata: { function_id: 'fn-1', execution_time_ms: 41, response: { status_code: 500 }, project_ref: 'abcdefghijklmnopqrst' },
      },
    });
  });

  it('severity_text fills the level where the source keeps one and the attributes do not: Postgres parsed.error_severity', () => {
    const out = fromClickHouseRow({ id: 'p1', timestamp: TS_TEXT, event_message: 'boom', severity_text: 'ERROR', source: 'postgres_logs', log_attributes: { 'parsed.sql_state_code': '42601', 'parsed.process_id': '77' } });
    expect(out).toEqual({
      source: sourceInfo('postgres.logs'),
      // sql_state_code stays text (42601 is a code, not a number); process_id is a number.
      record: { id: 'p1', timestamp: TS, event_message: 'boom', metadata: { parsed: { sql_state_code: '42601', process_id: 77, error_severity: 'ERROR' } } },
    });
  });

  it('an attribute holding the level wins over severity_text, which is then not kept', () => {
    const out = fromClickHouseRow({ id: 'a1', timestamp: TS_TEXT, event_message: 'x', severity_text: 'INFO', source: 'auth_logs', log_attributes: { level: 'warning', status: '422' } });
    expect(out).toEqual({ source: sourceInfo('gotrue.logs.prod'), record: { id: 'a1', timestamp: TS, event_message: 'x', metadata: { level: 'warning', status: 422 } } });
  });

  it('supavisor_logs and pgbouncer_logs are the pooler source', () => {
    for (const source of ['supavisor_logs', 'pgbouncer_logs']) {
      const out = fromClickHouseRow({ id: 's1', timestamp: TS_TEXT, event_message: 'ok', severity_text: 'LOG', source, log_attributes: {} });
      expect(out).toEqual({ source: sourceInfo('pgbouncer.logs.prod'), record: { id: 's1', timestamp: TS, event_message: 'ok', metadata: {} } });
    }
    expect(sourceOfClickHouse('supavisor_logs')?.name).toBe('pgbouncer.logs.prod');
    expect(clickHouseSourceOf(sourceInfo('pgbouncer.logs.prod'))).toBe('supavisor_logs');
    expect(clickHouseSourceOf(sourceInfo('deno-relay-logs'))).toBe('function_edge_logs');
  });

  it('a key that is both a value and a prefix of others keeps its value under _value, whichever comes first', () => {
    const expected = { request: { headers: { _value: 'raw', host: 'h', accept: '*/*' } } };
    expect(nestDottedKeys({ 'request.headers': 'raw', 'request.headers.host': 'h', 'request.headers.accept': '*/*' })).toEqual(expected);
    expect(nestDottedKeys({ 'request.headers.host': 'h', 'request.headers': 'raw', 'request.headers.accept': '*/*' })).toEqual(expected);
    // An attribute already named _value: the moved value takes __value.
    expect(nestDottedKeys({ a: '1', 'a.b': '2', 'a._value': '3' })).toEqual({ a: { __value: '1', b: '2', _value: '3' } });
    // Deeper: a value met on the way down to a longer key.
    expect(nestDottedKeys({ 'x.y': 'v', 'x.y.z.w': 'deep' })).toEqual({ x: { y: { _value: 'v', z: { w: 'deep' } } } });
  });

  it('__proto__ segments stay own keys', () => {
    const out = nestDottedKeys({ '__proto__.polluted': 'yes' });
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":"yes"}}');
  });

  it('text that does not read as its type stays text; arrays come back from JSON text', () => {
    const out = fromClickHouseRow({
      id: 'r1',
      timestamp: TS_TEXT,
      event_message: 'm',
      severity_text: 'info',
      source: 'realtime_logs',
      log_attributes: { 'context.line': '12a', 'context.time': '', 'context.domain': '["elixir"]', 'context.mfa': 'not json', project: 'abcdefghijklmnopqrst' },
    });
    expect(out).toEqual({
      source: sourceInfo('realtime.logs.prod'),
      record: { id: 'r1', timestamp: TS, event_message: 'm', metadata: { context: { line: '12a', time: '', domain: ['elixir'], mfa: 'not json' }, project: 'abcdefghijklmnopqrst', level: 'info' } },
    });
  });

  it('log_attributes as JSON text (a CSV cell) reads the same; other columns are kept; unknown sources and bad maps are errors', () => {
    const a = fromClickHouseRow({ id: 'x', timestamp: TS_TEXT, event_message: 'm', source: 'postgrest_logs', log_attributes: '{"host":"db"}', project: 'abcdefghijklmnopqrst' });
    expect(a).toEqual({ source: sourceInfo('postgREST.logs.prod'), record: { id: 'x', timestamp: TS, event_message: 'm', project: 'abcdefghijklmnopqrst', metadata: { host: 'db' } } });
    expect(fromClickHouseRow({ id: 'x', timestamp: TS_TEXT, source: 'nope_logs', log_attributes: {} })).toEqual({ error: expect.stringContaining('unknown source "nope_logs"') });
    expect(fromClickHouseRow({ id: 'x', timestamp: TS_TEXT, source: 'edge_logs', log_attributes: '{oops' })).toEqual({ error: 'log_attributes is not valid JSON' });
    expect(fromClickHouseRow({ id: 'x', timestamp: TS_TEXT, log_attributes: {} })).toEqual({ error: 'no source: a row of the logs table names its source' });
    expect(fromClickHouseRow([1])).toEqual({ error: 'not a JSON object' });
  });

  it('an unreadable timestamp is passed on, and the normalizer reports it', () => {
    const out = fromClickHouseRow({ id: 'x', timestamp: 'yesterday', event_message: 'm', source: 'edge_logs', log_attributes: {} });
    if ('error' in out) throw new Error(out.error);
    expect(out.record.timestamp).toBe('yesterday');
    expect(normalizeRecord(out.record, out.source, 'abcdefghijklmnopqrst')).toEqual({ error: 'unrecognized timestamp "yesterday"' });
  });

  it('isClickHouseRow tells the logs table from BigQuery-era records', () => {
    expect(isClickHouseRow({ id: 'x', timestamp: TS_TEXT, source: 'edge_logs', log_attributes: {} })).toBe(true);
    expect(isClickHouseRow({ id: 'x', timestamp: TS_TEXT, source: 'edge_logs', severity_text: 'INFO' })).toBe(true);
    expect(isClickHouseRow({ id: 'x', timestamp: 1, metadata: {} })).toBe(false);
    expect(isClickHouseRow({ id: 'x', timestamp: 1, source: 'edge_logs' })).toBe(false);
  });
});

describe('toClickHouseRow (the inverse, for fakes and tests)', () => {
  it('writes dotted text attributes, the timestamp without offset, and the level as severity_text', () => {
    const row = toClickHouseRow(
      { id: 'a1', timestamp: TS, event_message: 'x', metadata: { level: 'info', status: 200, auth_event: { actor_via_sso: false, action: 'login' }, tags: ['a', 'b'] } },
      sourceInfo('gotrue.logs.prod'),
    );
    expect(row).toEqual({
      id: 'a1',
      timestamp: TS_TEXT,
      event_message: 'x',
      severity_text: 'info',
      source: 'auth_logs',
      log_attributes: { level: 'info', status: '200', 'auth_event.actor_via_sso': 'false', 'auth_event.action': 'login', tags: '["a","b"]' },
    });
    expect(flattenToAttributes([{ request: [{ path: '/x' }] }])).toEqual({ 'request.path': '/x' });
  });

  it('a record with only typed fields at their known paths comes back equal', () => {
    const record = {
      id: 'e9',
      timestamp: TS,
      event_message: 'GET | 404',
      metadata: { request: { method: 'GET', cf: { asn: 3320, botManagement: { score: 30, corporateProxy: false } } }, response: { status_code: 404 } },
    };
    const out = fromClickHouseRow(toClickHouseRow(record, sourceInfo('cloudflare.logs.prod')));
    expect(out).toEqual({ source: sourceInfo('cloudflare.logs.prod'), record });
  });
});
