import { describe, expect, it } from 'vitest';
import { parseFromServer, parseToServer } from './protocol.ts';

describe('parseToServer', () => {
  it('accepts the three messages', () => {
    expect(parseToServer({ type: 'start', config: { dataDir: '/d', apiKey: 'k', demo: false } })).toEqual({ type: 'start', config: { dataDir: '/d', apiKey: 'k', demo: false } });
    expect(parseToServer({ type: 'start', config: { dataDir: '/d', apiKey: 'k', demo: true, rendererDir: '/r', extra: 1 } })).toEqual({ type: 'start', config: { dataDir: '/d', apiKey: 'k', demo: true, rendererDir: '/r' } });
    expect(parseToServer({ type: 'import', id: 1, files: ['/a', '/b'] })).toEqual({ type: 'import', id: 1, files: ['/a', '/b'] });
    expect(parseToServer({ type: 'import', id: 1, files: [], project: 'p' })).toEqual({ type: 'import', id: 1, files: [], project: 'p' });
    expect(parseToServer({ type: 'import', id: 2, files: ['/a'], source: 'auth_logs' })).toEqual({ type: 'import', id: 2, files: ['/a'], source: 'auth_logs' });
    expect(parseToServer({ type: 'import', id: 3, files: ['/a'], source: 'auth_logs', project: 'abcdefghijklmnopqrst', extra: true })).toEqual({
      type: 'import',
      id: 3,
      files: ['/a'],
      source: 'auth_logs',
      project: 'abcdefghijklmnopqrst',
    });
    expect(parseToServer({ type: 'shutdown' })).toEqual({ type: 'shutdown' });
  });

  it.each([
    null,
    'start',
    [],
    { type: 'start' },
    { type: 'start', config: { dataDir: '/d', apiKey: '', demo: false } },
    { type: 'start', config: { dataDir: '/d', apiKey: 'k' } },
    { type: 'start', config: { dataDir: 1, apiKey: 'k', demo: false } },
    { type: 'start', config: { dataDir: '/d', apiKey: 'k', demo: false, rendererDir: 5 } },
    { type: 'import', id: '1', files: [] },
    { type: 'import', id: 1, files: ['/a', 2] },
    { type: 'import', id: 1, files: [], project: 3 },
    { type: 'import', id: 1, files: [], source: ['auth_logs'] },
    { type: 'import', id: 1, files: [], source: null },
    { type: 'eval', code: 'x' },
  ])('rejects %j', (m) => {
    expect(parseToServer(m)).toBeUndefined();
  });
});

describe('parseFromServer', () => {
  it('accepts well-formed messages', () => {
    expect(parseFromServer({ type: 'hello', pid: 3 })).toEqual({ type: 'hello', pid: 3 });
    expect(parseFromServer({ type: 'ready', url: 'http://127.0.0.1:1', port: 1 })).toEqual({ type: 'ready', url: 'http://127.0.0.1:1', port: 1 });
    expect(parseFromServer({ type: 'log', level: 'warn', text: 'x' })).toEqual({ type: 'log', level: 'warn', text: 'x' });
    expect(parseFromServer({ type: 'fatal', message: 'x' })).toEqual({ type: 'fatal', message: 'x' });
    expect(parseFromServer({ type: 'import-done', id: 1, results: [] })).toMatchObject({ type: 'import-done', id: 1 });
    expect(parseFromServer({ type: 'import-progress', id: 1, file: 'f', index: 0, count: 1, bytes: 5, totalBytes: 10 })).toMatchObject({ bytes: 5 });
  });

  it.each([undefined, { type: 'ready', url: 'x' }, { type: 'log', level: 'loud', text: 'x' }, { type: 'hello' }, { type: 'import-done', id: 1 }, { type: 'import-progress', id: 1 }, { type: 'nope' }])('rejects %j', (m) => {
    expect(parseFromServer(m)).toBeUndefined();
  });
});
