import { describe, expect, it } from 'vitest';
import { generateRecords } from '../demo/generate.ts';
import { SOURCES } from '../sources.ts';
import { canonicalRecord, canonicalRow, normalizeRecord } from './normalize.ts';

const NOW = Date.UTC(2026, 10, 22, 12) * 1000;

/** What the explorer answers of a record, read from logs.all's canonical text. */
function fromText(text: string) {
  const r = JSON.parse(text) as { id: string; event_message: string; metadata: unknown };
  return { id: r.id, event_message: r.event_message, metadata: r.metadata };
}

describe('canonicalRow', () => {
  it("is the canonical record's id, event_message and metadata, for demo records of every source, with their ids and without", () => {
    for (const source of SOURCES) {
      let n = 0;
      for (const rec of generateRecords(source.name, { now: NOW, count: 40, seed: 7 })) {
        const plain = JSON.parse(JSON.stringify(rec)) as Record<string, unknown>;
        const variants = [plain, { ...plain, id: undefined }];
        for (const v of variants) {
          const stored = JSON.stringify(v);
          const norm = normalizeRecord(JSON.parse(stored), source, 'projaaaaaaaaaaaaaaaa');
          if ('error' in norm) throw new Error(`${source.name}: ${norm.error}`);
          const { project, ts } = norm.record;
          expect(canonicalRow(stored, source, project, ts), `${source.name} ${stored.slice(0, 80)}`).toEqual(fromText(canonicalRecord(stored, source, project, ts)));
          n++;
        }
      }
      expect(n, source.name).toBe(80);
    }
  });

  it('agrees on odd records: no metadata, a message that is not text, __proto__ and unicode keys, deep arrays', () => {
    const edge = SOURCES.find((s) => s.name === 'cloudflare.logs.prod')!;
    const host = { request: { url: 'https://projaaaaaaaaaaaaaaaa.supabase.co/rest/v1/x', host: 'projaaaaaaaaaaaaaaaa.supabase.co' }, response: { status_code: 200 } };
    const records = [
      { timestamp: NOW, event_message: { nested: ['a', 1] }, metadata: { ...host, '__proto__': { x: 1 }, 'ü ñ 🚀': [[1, [2, { a: null }]]] } },
      { id: 'given', timestamp: NOW - 1, event_message: null, metadata: { ...host, list: [] } },
      { timestamp: NOW - 2, event_message: 'line\u2028sep "q"', metadata: JSON.stringify(host) },
    ];
    for (const r of records) {
      const stored = JSON.stringify(r);
      const norm = normalizeRecord(JSON.parse(stored), edge, 'projaaaaaaaaaaaaaaaa');
      if ('error' in norm) throw new Error(norm.error);
      const { project, ts } = norm.record;
      // Byte for byte as answered: key order, the __proto__ key kept as data.
      expect(JSON.stringify(canonicalRow(stored, edge, project, ts))).toBe(JSON.stringify(fromText(canonicalRecord(stored, edge, project, ts))));
    }
  });
});
