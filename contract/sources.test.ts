import { describe, expect, it } from 'vitest';
import { findSourceName, findSourceNameExact, SOURCE_LABELS, SOURCE_NAMES, sourceAlias, sourceLabel, sourceNameInFileName } from './sources.ts';

describe('the sources', () => {
  it('nine, each with a name, an alias and a label', () => {
    expect(SOURCE_LABELS.map((s) => s.name)).toEqual([...SOURCE_NAMES]);
    expect(new Set(SOURCE_LABELS.map((s) => s.alias)).size).toBe(9);
  });

  it('one label for the pooler on every page: "Pooler (PgBouncer)", by name or alias', () => {
    // The import form once said "PgBouncer" while the explorer said "Pooler (PgBouncer)".
    expect(sourceLabel('pgbouncer.logs.prod')).toBe('Pooler (PgBouncer)');
    expect(sourceLabel('pgbouncer_logs')).toBe('Pooler (PgBouncer)');
    expect(sourceLabel('cloudflare.logs.prod')).toBe('Edge requests');
    expect(sourceLabel('no.such.source')).toBe('no.such.source');
  });

  it('found by name or alias in any case, exactly, or inside a file name (the longest wins)', () => {
    expect(findSourceName(' EDGE_LOGS ')).toBe('cloudflare.logs.prod');
    expect(findSourceName('postgrest.logs.prod')).toBe('postgREST.logs.prod');
    expect(findSourceNameExact('EDGE_LOGS')).toBeUndefined();
    expect(findSourceNameExact('edge_logs')).toBe('cloudflare.logs.prod');
    expect(sourceNameInFileName('exports/storage.logs.prod.2-2026-03-14.ndjson')).toBe('storage.logs.prod.2');
    expect(sourceNameInFileName('C:\\logs\\function_edge_logs.csv')).toBe('deno-relay-logs');
    expect(sourceAlias('deno-relay-logs')).toBe('function_edge_logs');
  });
});
