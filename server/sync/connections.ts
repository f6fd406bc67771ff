/**
 * Connections (README, "Sync a live project"): what each remote project is, checked once at the
 * edge, and kept in the data folder's `connections.json` (owner-only, written whole and
 * atomically: temp file, fsync, rename, folder fsync). Tokens are kept sealed by a TokenVault
 * (vault.ts). Where each source's sync stands is not here: its cursor is committed with the
 * records it covers, in the store's catalog (engine.ts), and what its card shows besides is in
 * `sync-state.json` (state.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import type { ErrorDetail } from '../errors.ts';
import { sourceOfClickHouse } from '../ingest/clickhouse-shape.ts';
import { SOURCES, type SourceName } from '../sources.ts';
import { syncDir, writeSynced } from '../store/durable.ts';
import { formatIsoMicros, inRange, MICROS, readIsoMicros, RECORD_RANGE } from '../time.ts';
import { checkBaseUrl, SUPABASE_API_URL, type ConnectionKind, type Dialect } from './remote.ts';
import type { SealedToken } from './vault.ts';

export const CONNECTIONS_FILE = 'connections.json';
export const KINDS = ['supabase', 'logflare'] as const;
export const DIALECTS = ['bigquery', 'clickhouse', 'detect'] as const;
/** Where history starts when a connection does not say: a week back (Pro's retention). */
export const DEFAULT_HISTORY_US = 7 * MICROS.day;
const MAX_TOKEN_CHARS = 4096;
const MAX_PROJECT_CHARS = 256;
const SUPABASE_REF = /^[a-z]{20}$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export interface StoredConnection {
  id: string;
  kind: ConnectionKind;
  /** The project: a Supabase project ref, or the project a Logflare server's logs.all takes. */
  ref: string;
  /** Base URL, normalized (no trailing slash). */
  url: string;
  token: SealedToken;
  /** What answers show of the token (vault.ts, tokenHint). */
  tokenHint: string;
  dialect: Dialect | 'detect';
  /** The dialect `detect` settled on, once a remote answered. */
  detected: Dialect | null;
  follow: boolean;
  paused: boolean;
  sources: SourceName[];
  /** Where history starts, µs. */
  start: number;
  createdAt: string;
}

/** A checked POST body (or test body): the token in clear, not yet sealed. */
export interface ConnectionInput {
  kind: ConnectionKind;
  ref: string;
  url: string;
  token: string;
  dialect: Dialect | 'detect';
  sources: SourceName[];
  start: number;
  follow: boolean;
}

/** A checked PATCH body. */
export interface ConnectionPatch {
  paused?: boolean;
  follow?: boolean;
  sources?: SourceName[];
  start?: number;
  token?: string;
}

/** Problems with a body, one per parameter; thrown as a 400 by the routes. */
export class InputProblems extends Error {
  constructor(readonly details: ErrorDetail[]) {
    super(details.map((d) => d.message).join('; '));
  }
}

/** The sources a kind syncs when none are named: every source of the Management API; edge logs of a Logflare server. */
export function defaultSources(kind: ConnectionKind): SourceName[] {
  return kind === 'logflare' ? ['cloudflare.logs.prod'] : SOURCES.map((s) => s.name);
}

const CREATE_KEYS = ['kind', 'ref', 'url', 'token', 'dialect', 'sources', 'start', 'follow'];
const PATCH_KEYS = ['paused', 'follow', 'sources', 'start', 'token'];

class Checker {
  readonly details: ErrorDetail[] = [];
  constructor(private readonly body: Record<string, unknown>) {}

  has(key: string): boolean {
    return Object.hasOwn(this.body, key) && this.body[key] !== undefined;
  }
  get(key: string): unknown {
    return Object.hasOwn(this.body, key) ? this.body[key] : undefined;
  }
  fail(location: string, message: string, reason = 'invalid'): void {
    if (!this.details.some((d) => d.location === location)) this.details.push({ reason, location, message });
  }
  unknownKeys(allowed: readonly string[], takes: string): void {
    for (const k of Object.keys(this.body)) if (!allowed.includes(k)) this.fail(k, `${k} is not a parameter here; the body takes ${takes}`, 'unknown');
  }
  throwIfAny(): void {
    if (this.details.length) throw new InputProblems(this.details);
  }

  token(): string | undefined {
    const t = this.get('token');
    if (t === undefined) return undefined;
    if (typeof t !== 'string' || t === '') return void this.fail('token', 'token must be a non-empty string');
    if (t.length > MAX_TOKEN_CHARS) return void this.fail('token', `token is longer than ${MAX_TOKEN_CHARS} characters`);
    // Header-safe: a token that cannot travel in a header would make the HTTP client throw (and quote it).
    if (!/^[\x21-\x7e]+$/.test(t)) return void this.fail('token', 'token must be printable ASCII without spaces, as the remote issued it');
    return t;
  }

  boolean(key: string): boolean | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') return void this.fail(key, `${key} must be true or false`);
    return v;
  }

  sources(kind: ConnectionKind | undefined): SourceName[] | undefined {
    const v = this.get('sources');
    if (v === undefined) return undefined;
    if (!Array.isArray(v) || v.length === 0 || !v.every((s) => typeof s === 'string')) {
      return void this.fail('sources', 'sources must be a non-empty array of source names or aliases (edge_logs, postgres_logs, ...)');
    }
    const out: SourceName[] = [];
    for (const s of v as string[]) {
      const info = sourceOfClickHouse(s);
      if (!info) return void this.fail('sources', `sources: ${JSON.stringify(s).slice(0, 80)} is not a source; use names or aliases such as edge_logs, postgres_logs, supavisor_logs`);
      if (!out.includes(info.name)) out.push(info.name);
    }
    if (kind === 'logflare' && out.some((s) => s !== 'cloudflare.logs.prod')) {
      return void this.fail('sources', "sources: a logflare connection reads logs.all, which answers edge logs only (edge_logs)");
    }
    return out;
  }

  start(now: number): number | undefined {
    const v = this.get('start');
    if (v === undefined) return undefined;
    const read = typeof v === 'string' ? readIsoMicros(v) : undefined;
    if (!read || !('us' in read)) return void this.fail('start', 'start must be an ISO 8601 timestamp such as 2026-06-01T00:00:00Z');
    if (!inRange(read.us, RECORD_RANGE)) return void this.fail('start', `start must be within ${RECORD_RANGE.text}`);
    if (read.us > now) return void this.fail('start', `start must not be later than now (${formatIsoMicros(now)})`);
    return read.us;
  }
}

/** Own keys only, into an object without a prototype. */
function ownKeys(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const out = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(body)) out[k] = v;
  return out;
}

/** Checks a POST /api/connections (or /test) body; throws InputProblems naming each parameter at fault. */
export function readConnectionInput(raw: unknown, now: number): ConnectionInput {
  const body = ownKeys(raw);
  if (!body) throw new InputProblems([{ reason: 'invalid', location: 'body', message: 'the request body must be a JSON object like {"kind": "supabase", "ref": "abcdefghijklmnopqrst", "token": "sbp_..."}' }]);
  const c = new Checker(body);
  c.unknownKeys(CREATE_KEYS, CREATE_KEYS.join(', '));

  const kind = c.get('kind');
  if (kind === undefined) c.fail('kind', 'kind is required: supabase or logflare', 'required');
  else if (!KINDS.includes(kind as ConnectionKind)) c.fail('kind', 'kind must be supabase or logflare');
  const k = KINDS.includes(kind as ConnectionKind) ? (kind as ConnectionKind) : undefined;

  const ref = c.get('ref');
  if (ref === undefined || ref === '') c.fail('ref', k === 'logflare' ? 'ref is required: the project logs.all is asked about' : 'ref is required: the project ref (20 lowercase letters)', 'required');
  else if (typeof ref !== 'string') c.fail('ref', 'ref must be a string');
  else if (k === 'supabase' && !SUPABASE_REF.test(ref)) c.fail('ref', 'ref must be a Supabase project ref: 20 lowercase letters (the subdomain of <ref>.supabase.co)');
  else if (k === 'logflare' && (ref.trim() === '' || ref.length > MAX_PROJECT_CHARS || CONTROL.test(ref))) c.fail('ref', `ref must be a project name of 1 to ${MAX_PROJECT_CHARS} characters without control characters`);

  let url: string | undefined;
  const u = c.get('url');
  if (u === undefined || u === '') {
    if (k === 'logflare') c.fail('url', 'url is required for a logflare connection: the base URL of the Logflare server (https://...)', 'required');
    url = SUPABASE_API_URL;
  } else if (typeof u !== 'string') c.fail('url', 'url must be a string');
  else {
    const checked = checkBaseUrl(u);
    if ('problem' in checked) c.fail('url', checked.problem);
    else url = checked.url;
  }

  const token = c.token();
  if (!c.has('token')) c.fail('token', 'token is required: a personal access token (supabase) or an access token of the Logflare server', 'required');

  let dialect: Dialect | 'detect' = 'detect';
  const d = c.get('dialect');
  if (d !== undefined) {
    if (k === 'logflare') c.fail('dialect', 'dialect applies to supabase connections only (a logflare connection sends no SQL)');
    else if (!DIALECTS.includes(d as Dialect)) c.fail('dialect', 'dialect must be one of bigquery, clickhouse, detect');
    else dialect = d as Dialect | 'detect';
  }

  const sources = c.sources(k) ?? (k ? defaultSources(k) : []);
  const start = c.start(now) ?? now - DEFAULT_HISTORY_US;
  const follow = c.boolean('follow') ?? true;
  c.throwIfAny();
  return { kind: k!, ref: ref as string, url: url!, token: token!, dialect, sources, start, follow };
}

/** Checks a PATCH /api/connections/:id body against its connection. */
export function readConnectionPatch(raw: unknown, kind: ConnectionKind, now: number): ConnectionPatch {
  const body = ownKeys(raw);
  if (!body) throw new InputProblems([{ reason: 'invalid', location: 'body', message: 'the request body must be a JSON object like {"paused": true}' }]);
  const c = new Checker(body);
  c.unknownKeys(PATCH_KEYS, PATCH_KEYS.join(', '));
  const patch: ConnectionPatch = {};
  const paused = c.boolean('paused');
  if (paused !== undefined) patch.paused = paused;
  const follow = c.boolean('follow');
  if (follow !== undefined) patch.follow = follow;
  const sources = c.sources(kind);
  if (sources) patch.sources = sources;
  const start = c.start(now);
  if (start !== undefined) patch.start = start;
  const token = c.token();
  if (token !== undefined) patch.token = token;
  if (!c.details.length && Object.keys(body).length === 0) c.fail('body', `the body must change something: ${PATCH_KEYS.join(', ')}`);
  c.throwIfAny();
  return patch;
}

// ---- the file ----

const sealedSchema = z.union([z.strictObject({ plain: z.string() }), z.strictObject({ aes256gcm: z.string() })]);
const sourceSchema = z.string().refine((s) => SOURCES.some((x) => x.name === s)) as unknown as z.ZodType<SourceName>;
const fileSchema = z.object({
  version: z.literal(1),
  connections: z.array(
    z.object({
      id: z.string().min(1),
      kind: z.enum(KINDS),
      ref: z.string().min(1),
      url: z.string().min(1),
      token: sealedSchema,
      tokenHint: z.string(),
      dialect: z.enum(DIALECTS),
      detected: z.enum(['bigquery', 'clickhouse']).nullable(),
      follow: z.boolean(),
      paused: z.boolean(),
      sources: z.array(sourceSchema).min(1),
      start: z.number().int(),
      createdAt: z.string(),
    }),
  ),
});

/**
 * The connections of one data folder. Changes run one at a time; each writes the whole file
 * before memory changes, so a refused write (a full disk) changes nothing.
 */
export class ConnectionFile {
  #list: readonly StoredConnection[];
  #tail: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly dataDir: string,
    list: readonly StoredConnection[],
  ) {
    this.#list = list;
  }

  get file(): string {
    return path.join(this.dataDir, CONNECTIONS_FILE);
  }

  get list(): readonly StoredConnection[] {
    return this.#list;
  }

  /**
   * Reads `connections.json`. A file that cannot be read as connections is moved aside
   * (`connections.json.corrupt-<time>`, kept for the user: it holds tokens) with a warning.
   */
  static open(dataDir: string): ConnectionFile {
    const file = path.join(dataDir, CONNECTIONS_FILE);
    fs.rmSync(`${file}.tmp`, { force: true });
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new ConnectionFile(dataDir, []);
      throw err;
    }
    let problem: string;
    try {
      const checked = fileSchema.safeParse(JSON.parse(text));
      if (checked.success) return new ConnectionFile(dataDir, checked.data.connections as StoredConnection[]);
      const issue = checked.error.issues[0];
      problem = `unexpected content at ${issue?.path.join('.') || 'the top'}: ${issue?.message ?? 'invalid'}`;
    } catch (err) {
      problem = `not JSON (${(err as Error).message})`;
    }
    const aside = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    fs.renameSync(file, aside);
    console.warn(`connections: ${file} could not be read (${problem}); moved it to ${aside} and started with no connections`);
    return new ConnectionFile(dataDir, []);
  }

  /** Runs one change: `fn` returns the next list (or throws to refuse); the file is written before memory changes. */
  change<T>(fn: (current: readonly StoredConnection[]) => { next: readonly StoredConnection[]; result: T }): Promise<T> {
    const run = this.#tail.then(async () => {
      const { next, result } = fn(this.#list);
      await this.#write(next);
      this.#list = next;
      return result;
    });
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async #write(list: readonly StoredConnection[]): Promise<void> {
    const file = this.file;
    const tmp = `${file}.tmp`;
    try {
      await writeSynced(tmp, `${JSON.stringify({ version: 1, connections: list }, null, 1)}\n`);
      await fs.promises.rename(tmp, file);
    } catch (err) {
      await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
      throw err;
    }
    await syncDir(this.dataDir).catch((err: Error) => console.warn(`connections: could not sync ${this.dataDir}: ${err.message}`));
  }
}
