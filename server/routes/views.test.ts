import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LogStore } from '../store/log-store.ts';
import { MAX_SAVED_VIEWS, VIEWS_FILE } from '../store/view-store.ts';
import { appOver, tempDir, type TestApp } from '../testing/fixtures.ts';

interface ErrorInfo {
  code: number;
  status: string;
  message: string;
  errors: Array<{ reason: string; location?: string; message: string }>;
}
interface View {
  id: string;
  name: string;
  page: string;
  state: string;
  createdAt: string;
}
interface Search {
  id: string;
  page: string;
  state: string;
  label: string;
  at: string;
}

const dirs: string[] = [];
let t: TestApp | undefined;

afterEach(async () => {
  vi.restoreAllMocks();
  await t?.close();
  t = undefined;
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function newDir(): string {
  const d = tempDir('le-views-');
  dirs.push(d);
  return d;
}

/** The app over a store in `dir` (a new folder unless given), as a restart on that folder would open it. */
async function open(dir = newDir()): Promise<TestApp> {
  return appOver(await LogStore.open(dir));
}

async function reopen(app: TestApp): Promise<TestApp> {
  const dir = app.store.dataDir;
  await app.close();
  return open(dir);
}

function send(app: TestApp, method: string, p: string, body?: unknown): Promise<Response> {
  return app.request(p, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function result<T>(res: Response, status = 200): Promise<T> {
  const body = (await res.json()) as { result: T; error?: ErrorInfo };
  expect(res.status, JSON.stringify(body.error)).toBe(status);
  return body.result;
}

async function errorOf(res: Response, status: number): Promise<ErrorInfo> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  return ((await res.json()) as { error: ErrorInfo }).error;
}

const list = async (app: TestApp) => result<View[]>(await app.request('/api/views'));
const searches = async (app: TestApp) => result<Search[]>(await app.request('/api/searches'));
const save = async (app: TestApp, name: string, page = 'usage', state = 'project=abc&interval=daily') =>
  result<View>(await send(app, 'POST', '/api/views', { name, page, state }), 201);
const search = async (app: TestApp, state: string, label = state) => result<Search>(await send(app, 'POST', '/api/searches', { page: 'logs', state, label }), 201);

describe('saved views', () => {
  it('create, list newest first, rename and delete', async () => {
    t = await open();
    expect(await list(t)).toEqual([]);
    const a = await save(t, 'Usage daily');
    expect(a).toMatchObject({ name: 'Usage daily', page: 'usage', state: 'project=abc&interval=daily' });
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(a.createdAt)).not.toBeNaN();
    // A leading "?" is dropped and the name is trimmed.
    const b = await save(t, '  Errors  ', 'functions', '?project=abc&interval=1hr');
    expect(b).toMatchObject({ name: 'Errors', page: 'functions', state: 'project=abc&interval=1hr' });
    expect((await list(t)).map((v) => v.name)).toEqual(['Errors', 'Usage daily']);

    const renamed = await result<View>(await send(t, 'PATCH', `/api/views/${a.id}`, { name: 'Usage per day' }));
    expect(renamed).toEqual({ ...a, name: 'Usage per day' });
    // Renaming a view to its own name in another case is allowed (it is not a duplicate of itself).
    expect((await result<View>(await send(t, 'PATCH', `/api/views/${a.id}`, { name: 'usage per day' }))).name).toBe('usage per day');

    expect(await result(await send(t, 'DELETE', `/api/views/${b.id}`))).toEqual({ id: b.id, deleted: true });
    expect((await list(t)).map((v) => v.name)).toEqual(['usage per day']);
    // HEAD is answered like GET.
    expect((await t.request('/api/views', { method: 'HEAD' })).status).toBe(200);
  });

  it('a duplicate name is a 409 naming `name`, compared case-insensitively; renames too', async () => {
    t = await open();
    await save(t, 'Errors');
    const other = await save(t, 'Other');
    for (const res of [await send(t, 'POST', '/api/views', { name: 'errors', page: 'logs', state: '' }), await send(t, 'PATCH', `/api/views/${other.id}`, { name: ' ERRORS ' })]) {
      const e = await errorOf(res, 409);
      expect(e.status).toBe('ALREADY_EXISTS');
      expect(e.errors).toEqual([{ reason: 'duplicate', location: 'name', message: expect.stringMatching(/^a view named "(errors|ERRORS)" exists already/) }]);
    }
    expect((await list(t)).map((v) => v.name)).toEqual(['Other', 'Errors']);
  });

  it('every rejection is a 400 naming the parameter', async () => {
    t = await open();
    const cases: Array<[unknown, string, RegExp]> = [
      [{ page: 'logs', state: '' }, 'name', /^name is required$/],
      [{ name: 7, page: 'logs', state: '' }, 'name', /^name must be a string$/],
      [{ name: '', page: 'logs', state: '' }, 'name', /^name must not be empty$/],
      [{ name: '   ', page: 'logs', state: '' }, 'name', /^name must have a visible character/],
      [{ name: 'x'.repeat(101), page: 'logs', state: '' }, 'name', /^name is longer than 100 characters$/],
      [{ name: 'a\nb', page: 'logs', state: '' }, 'name', /control characters/],
      [{ name: 'x', page: 'nope', state: '' }, 'page', /^page must be one of functions, logs, usage, data, settings$/],
      [{ name: 'x', state: '' }, 'page', /^page is required$/],
      [{ name: 'x', page: 'logs' }, 'state', /^state is required$/],
      [{ name: 'x', page: 'logs', state: 'a='.padEnd(4097, 'b') }, 'state', /^state is longer than 4096 bytes/],
      [{ name: 'x', page: 'logs', state: 'a=1#key=secret' }, 'state', /without a fragment/],
      [{ name: 'x', page: 'logs', state: 'a=1 2' }, 'state', /no spaces/],
      [{ name: 'x', page: 'logs', state: '', extra: 1 }, 'extra', /^extra is not a parameter here; the body takes name, page and state$/],
      ['{"name": "x", "page": "logs", "state": "", "__proto__": {"name": "y"}}', '__proto__', /is not a parameter here/],
      ['not json', 'body', /must be a JSON object/],
      ['[1]', 'body', /must be a JSON object/],
      ['', 'body', /must be a JSON object/],
    ];
    for (const [body, location, message] of cases) {
      const e = await errorOf(await send(t, 'POST', '/api/views', body), 400);
      expect(e.status, JSON.stringify(body).slice(0, 80)).toBe('INVALID_ARGUMENT');
      expect(e.errors[0]!.location, JSON.stringify(body).slice(0, 80)).toBe(location);
      expect(e.errors[0]!.message, JSON.stringify(body).slice(0, 80)).toMatch(message);
    }
    // Several bad parameters: each is named once.
    const e = await errorOf(await send(t, 'POST', '/api/views', { name: '', page: 'x' }), 400);
    expect(e.errors.map((d) => d.location)).toEqual(['name', 'page', 'state']);
    // A state of exactly 4 KiB is fine; 100 characters of name too, counted as characters, not UTF-16 units.
    await save(t, '😀'.repeat(100), 'logs', 'a='.padEnd(4096, 'b'));
    // Inherited keys never count as sent: an empty object misses every parameter.
    expect((await errorOf(await send(t, 'PATCH', `/api/views/${(await list(t))[0]!.id}`, '{}'), 400)).errors[0]).toMatchObject({ reason: 'required', location: 'name' });
    expect(await list(t)).toHaveLength(1);
  });

  it('`required` only for a parameter not sent (or an empty name); anything sent and refused is `invalid`', async () => {
    t = await open();
    const reasons = async (method: string, p: string, body: unknown) => (await errorOf(await send(t!, method, p, body), 400)).errors.map((d) => [d.location, d.reason]);
    expect(await reasons('POST', '/api/views', {})).toEqual([
      ['name', 'required'],
      ['page', 'required'],
      ['state', 'required'],
    ]);
    expect(await reasons('POST', '/api/views', { name: '', page: 'logs', state: '' })).toEqual([['name', 'required']]);
    for (const name of [7, null, true, ['x'], '   ', 'x'.repeat(101), 'a\nb', 'tab\there', '\u200b']) {
      expect(await reasons('POST', '/api/views', { name, page: 'logs', state: '' }), JSON.stringify(name)).toEqual([['name', 'invalid']]);
    }
    expect(await reasons('POST', '/api/views', { name: 'x', page: 'nope', state: 'a=1#k' })).toEqual([
      ['page', 'invalid'],
      ['state', 'invalid'],
    ]);
    expect(await reasons('POST', '/api/searches', { page: 'logs', state: '', label: 'x'.repeat(257) })).toEqual([['label', 'invalid']]);
    expect(await reasons('POST', '/api/searches', { page: 'logs', label: 'x' })).toEqual([['state', 'required']]);
    const v = await save(t, 'Kept');
    expect(await reasons('PATCH', `/api/views/${v.id}`, { name: '' })).toEqual([['name', 'required']]);
    expect(await reasons('PATCH', `/api/views/${v.id}`, { name: 'x'.repeat(101) })).toEqual([['name', 'invalid']]);
  });

  it('a name with nothing visible (blanks, zero-width and bidi characters, lone combining marks) is a 400 `invalid` naming `name`', async () => {
    t = await open();
    const kept = await save(t, 'Kept');
    const message = 'name must have a visible character; it holds only blanks, zero-width or formatting characters, or combining marks';
    const invisible = [
      '\u200b', // zero width space
      '\u200b\u200c\u200d\u2060', // zero width non-joiner, joiner, word joiner
      '\u202e', // right-to-left override
      '\u202a\u202c\u2066\u2069', // bidi embedding, pop, isolates
      '\u200e\u200f', // left-to-right and right-to-left marks
      '\ufeff', // byte order mark
      '\u00ad', // soft hyphen
      '\u0301', // a combining acute accent alone
      '\u0301\u0308\u20dd', // combining marks and an enclosing circle
      '\u00a0\u3000\u2003', // no-break, ideographic and em spaces
      '\u2028\u2029', // line and paragraph separators
      '\u3164', // Hangul filler
      ' \u200b \u202e ', // a mixture with spaces around
    ];
    for (const name of invisible) {
      const label = [...name].map((ch) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`).join(' ');
      for (const res of [await send(t, 'POST', '/api/views', { name, page: 'logs', state: '' }), await send(t, 'PATCH', `/api/views/${kept.id}`, { name })]) {
        const e = await errorOf(res, 400);
        expect(e.errors, label).toEqual([{ reason: 'invalid', location: 'name', message }]);
      }
    }
    // Visible text with such characters in it is a name: e + combining acute, a name with an inner zero-width joiner.
    expect((await save(t, 'Cafe\u0301')).name).toBe('Cafe\u0301');
    expect((await save(t, '\u{1F469}\u200d\u{1F4BB} team')).name).toBe('\u{1F469}\u200d\u{1F4BB} team');
    expect((await list(t)).map((v) => v.name)).toEqual(['\u{1F469}\u200d\u{1F4BB} team', 'Cafe\u0301', 'Kept']);
  });

  it('unknown ids are 404 naming `id`; wrong methods are 405 with Allow', async () => {
    t = await open();
    for (const [method, body] of [
      ['PATCH', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const e = await errorOf(await send(t, method, '/api/views/nope', body), 404);
      expect(e.errors).toEqual([{ reason: 'not_found', location: 'id', message: 'no saved view with id nope' }]);
    }
    for (const [p, method, allow] of [
      ['/api/views', 'PUT', 'GET, HEAD, POST'],
      ['/api/views', 'DELETE', 'GET, HEAD, POST'],
      ['/api/views/x', 'GET', 'PATCH, DELETE'],
      ['/api/searches', 'PUT', 'GET, HEAD, POST, DELETE'],
    ] as const) {
      const res = await send(t, method, p);
      expect(res.status, `${method} ${p}`).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
    }
  });

  it('the key and host checks apply', async () => {
    t = await open();
    expect((await t.request('/api/views', { headers: { 'x-api-key': 'wrong' } })).status).toBe(401);
    expect((await t.request('/api/searches', { method: 'POST', headers: { host: 'evil.example:4100' }, body: '{}' })).status).toBe(403);
  });

  it(`at most ${MAX_SAVED_VIEWS} views: past it a 400 that says so`, async () => {
    t = await open();
    for (let i = 0; i < MAX_SAVED_VIEWS; i++) await save(t, `view ${i}`);
    const e = await errorOf(await send(t, 'POST', '/api/views', { name: 'one more', page: 'logs', state: '' }), 400);
    expect(e.errors).toEqual([{ reason: 'limit', location: 'body', message: `at most ${MAX_SAVED_VIEWS} views can be saved; delete one first` }]);
    expect(await list(t)).toHaveLength(MAX_SAVED_VIEWS);
  });

  it('concurrent saves of one name: one wins, the other is a 409', async () => {
    t = await open();
    const statuses = await Promise.all([1, 2, 3].map(() => send(t!, 'POST', '/api/views', { name: 'Same', page: 'logs', state: '' }).then((r) => r.status)));
    expect(statuses.sort()).toEqual([201, 409, 409]);
    expect(await list(t)).toHaveLength(1);
  });
});

describe('recent searches', () => {
  it('the last 20, newest first; a repeated search moves to the top; DELETE clears', async () => {
    t = await open();
    for (let i = 0; i < 25; i++) await search(t, `project=p&q=${i}`, `query ${i}`);
    let got = await searches(t);
    expect(got).toHaveLength(20);
    expect(got.map((s) => s.label)).toEqual(Array.from({ length: 20 }, (_, i) => `query ${24 - i}`));
    // Search 10 again, with a new label: it moves to the top, once, keeping its id.
    const before = got.find((s) => s.label === 'query 10')!;
    const again = await search(t, 'project=p&q=10', 'query ten');
    expect(again.id).toBe(before.id);
    got = await searches(t);
    expect(got).toHaveLength(20);
    expect(got[0]).toMatchObject({ id: before.id, label: 'query ten', page: 'logs', state: 'project=p&q=10' });
    expect(got.filter((s) => s.state === 'project=p&q=10')).toHaveLength(1);
    // The label may be left out (empty), not the page or state.
    expect((await result<Search>(await send(t, 'POST', '/api/searches', { page: 'usage', state: 'regex=a' }), 201)).label).toBe('');
    expect((await errorOf(await send(t, 'POST', '/api/searches', { page: 'logs', label: 'x' }), 400)).errors[0]!.location).toBe('state');
    expect((await errorOf(await send(t, 'POST', '/api/searches', { page: 'logs', state: '', label: 'x'.repeat(257) }), 400)).errors[0]).toMatchObject({ location: 'label', message: 'label is longer than 256 characters' });
    expect((await errorOf(await send(t, 'POST', '/api/searches', { page: 'logs', state: '', q: 'x' }), 400)).errors[0]!.location).toBe('q');

    expect(await result(await send(t, 'DELETE', '/api/searches'))).toEqual({ cleared: 20 });
    expect(await searches(t)).toEqual([]);
  });
});

describe('on disk', () => {
  it('views and searches survive reopening the app over the same folder; the file is owner-only', async () => {
    t = await open();
    const v = await save(t, 'Kept', 'functions', 'project=abc&interval=1day');
    await search(t, 'project=abc&range=1h', 'status:500');
    const file = path.join(t.store.dataDir, VIEWS_FILE);
    if (process.platform !== 'win32') expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(`${file}.tmp`)).toBe(false);
    t = await reopen(t);
    expect(await list(t)).toEqual([v]);
    expect((await searches(t)).map((s) => s.label)).toEqual(['status:500']);
  });

  it('a views.json that starts with a UTF-8 byte order mark is read, not moved aside; the next write leaves the mark out', async () => {
    const dir = newDir();
    const view = { id: 'v1', name: 'From Notepad', page: 'logs', state: 'q=1', createdAt: '2026-11-01T00:00:00.000Z' };
    const search = { id: 's1', page: 'usage', state: 'interval=daily', label: 'daily', at: '2026-11-02T00:00:00.000Z' };
    const file = path.join(dir, VIEWS_FILE);
    fs.writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ version: 1, views: [view], searches: [search] }))]));
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    t = await open(dir);
    expect(warn).not.toHaveBeenCalled();
    expect(fs.readdirSync(dir).filter((f) => f.includes('corrupt'))).toEqual([]);
    expect(await list(t)).toEqual([view]);
    expect(await searches(t)).toEqual([search]);
    await save(t, 'Second');
    expect(fs.readFileSync(file)[0]).toBe('{'.charCodeAt(0));
    t = await reopen(t);
    expect((await list(t)).map((v) => v.name)).toEqual(['Second', 'From Notepad']);
  });

  it('a view an earlier version saved with a name now refused (nothing visible) still loads with the rest', async () => {
    const dir = newDir();
    const views = [
      { id: 'v1', name: '\u200b', page: 'logs', state: '', createdAt: '2026-11-01T00:00:00.000Z' },
      { id: 'v2', name: 'Kept', page: 'usage', state: 'interval=daily', createdAt: '2026-11-01T00:00:00.000Z' },
    ];
    fs.writeFileSync(path.join(dir, VIEWS_FILE), JSON.stringify({ version: 1, views, searches: [] }));
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    t = await open(dir);
    expect(warn).not.toHaveBeenCalled();
    expect(await list(t)).toEqual(views);
    // It can be renamed to a visible name.
    expect((await result<View>(await send(t, 'PATCH', '/api/views/v1', { name: 'Renamed' }))).name).toBe('Renamed');
  });

  it('a leftover temp file from a crash is ignored and removed', async () => {
    const dir = newDir();
    fs.writeFileSync(path.join(dir, `${VIEWS_FILE}.tmp`), '{"half');
    t = await open(dir);
    expect(await list(t)).toEqual([]);
    expect(fs.existsSync(path.join(dir, `${VIEWS_FILE}.tmp`))).toBe(false);
  });

  it('a corrupt views.json is moved aside with a warning and a fresh list starts; never a crash', async () => {
    for (const content of ['{"version": 1, "views": [', '{"version": 1, "views": [{"id": "x"}], "searches": []}', '[]', '\u0000\u0001garbage']) {
      const dir = newDir();
      fs.writeFileSync(path.join(dir, VIEWS_FILE), content);
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
      t = await open(dir);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]![0])).toMatch(/could not be read .*moved it to .*views\.json\.corrupt-/);
      warn.mockRestore();
      const aside = fs.readdirSync(dir).filter((f) => f.startsWith(`${VIEWS_FILE}.corrupt-`));
      expect(aside).toHaveLength(1);
      expect(fs.readFileSync(path.join(dir, aside[0]!), 'utf8')).toBe(content);
      expect(await list(t)).toEqual([]);
      // And the fresh one works and is kept.
      await save(t, 'After');
      t = await reopen(t);
      expect((await list(t)).map((v) => v.name)).toEqual(['After']);
      await t.close();
      t = undefined;
    }
  });

  it('a full disk answers 507 and changes nothing, in memory or on disk', async () => {
    t = await open();
    const kept = await save(t, 'Kept');
    await search(t, 'q=1', 'one');
    const file = path.join(t.store.dataDir, VIEWS_FILE);
    const onDisk = fs.readFileSync(file, 'utf8');
    const realOpen = fs.promises.open;
    vi.spyOn(fs.promises, 'open').mockImplementation(async (...args: Parameters<typeof fs.promises.open>) => {
      if (String(args[0]).endsWith(`${VIEWS_FILE}.tmp`)) throw Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' });
      return realOpen(...args);
    });
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const attempts: Array<[string, string, unknown]> = [
      ['POST', '/api/views', { name: 'Refused', page: 'logs', state: '' }],
      ['PATCH', `/api/views/${kept.id}`, { name: 'Renamed' }],
      ['DELETE', `/api/views/${kept.id}`, undefined],
      ['POST', '/api/searches', { page: 'logs', state: 'q=2', label: 'two' }],
      ['DELETE', '/api/searches', undefined],
    ];
    for (const [method, p, body] of attempts) {
      const e = await errorOf(await send(t, method, p, body), 507);
      expect(e.status).toBe('INSUFFICIENT_STORAGE');
      expect(e.message).toMatch(/^the disk is full: the saved views and searches were not changed/);
    }
    expect(await list(t)).toEqual([kept]);
    expect((await searches(t)).map((s) => s.label)).toEqual(['one']);
    expect(fs.readFileSync(file, 'utf8')).toBe(onDisk);
    expect(fs.existsSync(`${file}.tmp`)).toBe(false);
    // Once space is back, changes work again.
    vi.restoreAllMocks();
    await save(t, 'Later');
    expect((await list(t)).map((v) => v.name)).toEqual(['Later', 'Kept']);
  });

  it('a write that fails while being written (not at open) leaves no temp file and changes nothing', async () => {
    t = await open();
    await save(t, 'Kept');
    const realOpen = fs.promises.open;
    vi.spyOn(fs.promises, 'open').mockImplementation(async (...args: Parameters<typeof fs.promises.open>) => {
      const handle = await realOpen(...args);
      if (String(args[0]).endsWith(`${VIEWS_FILE}.tmp`)) {
        vi.spyOn(handle, 'sync').mockRejectedValue(Object.assign(new Error('EDQUOT: disk quota exceeded, fsync'), { code: 'EDQUOT' }));
      }
      return handle;
    });
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    expect((await send(t, 'POST', '/api/views', { name: 'Refused', page: 'logs', state: '' })).status).toBe(507);
    expect(fs.existsSync(path.join(t.store.dataDir, `${VIEWS_FILE}.tmp`))).toBe(false);
    vi.restoreAllMocks();
    t = await reopen(t);
    expect((await list(t)).map((v) => v.name)).toEqual(['Kept']);
  });
});
