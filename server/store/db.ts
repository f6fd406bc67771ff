/**
 * The only module that touches sql.js. Everything else sees this small interface, so the
 * engine can change (or gain a native twin) without the rest of the server noticing.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type initSqlJs from 'sql.js';
import { activityLogged, gauge } from '../activity.ts';
import type { Database, SqlJsStatic, Statement } from 'sql.js';

export type SqlValue = number | string | Uint8Array | null;
export type SqlParams = Record<string, SqlValue | bigint | boolean | undefined> | SqlValue[];
export type Row = Record<string, SqlValue>;

/** A query stopped at its deadline (see withDeadline). */
export class QueryTimeout extends Error {
  constructor() {
    super('the query ran past its time limit');
  }
}

/**
 * The WebAssembly instance behind every database trapped (a stack overflow, say): its memory
 * may be corrupt, so no database of that instance is touched again. The store reopens from
 * its last saved state on a fresh instance (LogStore's engine recovery).
 */
export class EngineTrapped extends Error {
  constructor(cause?: unknown) {
    super('the database engine failed and is being reopened from the last saved state', { cause });
  }
}

/**
 * Text a user-defined function may hand back to SQLite. sql.js copies such a result onto the
 * WebAssembly stack (5 MiB); a longer one would overflow it and trap the instance. Larger
 * results are refused as an ordinary SQL error instead. Exposed so a test can lift it.
 */
export const engineLimits = { functionTextChars: 1 << 20 };

export interface AggregateSpec<S> {
  init: () => S;
  step: (state: S, ...args: SqlValue[]) => S;
  finalize: (state: S) => SqlValue;
}

export interface Db {
  /** Runs one or more statements that return nothing. */
  exec(sql: string): void;
  /** Runs one statement with bound `@name` parameters; returns rows changed. */
  run(sql: string, params?: SqlParams): number;
  /** Runs one statement and returns every row as an object keyed by column name. */
  query<T extends Row = Row>(sql: string, params?: SqlParams): T[];
  /** Like query, but each row as an array in column order (no per-row objects: for bulk reads). */
  rows(sql: string, params?: SqlParams): SqlValue[][];
  /** Runs fn inside BEGIN/COMMIT; rolls back and rethrows on error. Not reentrant. */
  transaction<T>(fn: () => T): T;
  /** A scalar function callable from SQL; kept across exports. */
  defineFunction(name: string, fn: (...args: SqlValue[]) => SqlValue, deterministic?: boolean): void;
  /** An aggregate callable from SQL; kept across exports. */
  defineAggregate<S>(name: string, spec: AggregateSpec<S>): void;
  /** A consistent image of the whole database file. */
  exportImage(): Uint8Array;
  close(): void;
}

/** The deadline of the running withDeadline scope: one for all databases (one thread). */
const deadlineState = { deadline: Infinity, timedOut: false };

function checkDeadline(): void {
  if (deadlineState.deadline !== Infinity && performance.now() > deadlineState.deadline) {
    deadlineState.timedOut = true;
    throw new QueryTimeout();
  }
}

/**
 * Runs fn with every query of every database stopped by a QueryTimeout once
 * `performance.now()` passes `deadline`. sql.js exposes no interrupt or progress handler, so the
 * check runs wherever control returns to JS: at every call of a user-defined function or
 * aggregate step, and between result rows; SQL that calls no function is cut only at its next row.
 */
export function withDeadline<T>(deadline: number, fn: () => T): T {
  const outer = deadlineState.deadline;
  deadlineState.deadline = Math.min(outer, deadline);
  try {
    return fn();
  } finally {
    deadlineState.deadline = outer;
    if (outer === Infinity) deadlineState.timedOut = false;
  }
}

/** What the diagnostics use of the WebAssembly global (Node's types do not declare it). */
interface WasmInstance {
  exports: Record<string, { buffer: { byteLength: number } }>;
}
interface WasmApi {
  instantiate(bytes: Uint8Array, imports: unknown): Promise<{ instance: WasmInstance; module: unknown }>;
  Memory: new () => unknown;
}

/** The live instance, and which one it is: databases of an older generation are dead. */
const engineState: { generation: number; trapped: boolean; onTrap: Set<() => void> } = { generation: 0, trapped: false, onTrap: new Set() };

/**
 * A new sql.js instance. sql.js keeps one module per loaded script, so a fresh instance needs
 * the script evaluated again: it is taken out of the require cache first.
 */
function freshEngine(): Promise<SqlJsStatic> {
  const require = createRequire(import.meta.url);
  const script = require.resolve('sql.js/dist/sql-wasm.js');
  delete require.cache[script];
  const init = require(script) as typeof initSqlJs;
  const wasm = require.resolve('sql.js/dist/sql-wasm.wasm');
  if (!activityLogged) return init({ locateFile: () => wasm });
  // Diagnostics: the instance's memory (every database's pages and caches) is sampled with the
  // process's; Emscripten's instantiateWasm hook is the one place its Memory is visible.
  const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  return init({
    locateFile: () => wasm,
    instantiateWasm(imports: unknown, done: (instance: WasmInstance, module: unknown) => void) {
      void wasmApi.instantiate(fs.readFileSync(wasm), imports).then(({ instance, module }) => {
        const memory = Object.values(instance.exports).find((e) => e instanceof wasmApi.Memory);
        if (memory) gauge('sqlJsHeap', () => memory.buffer.byteLength);
        done(instance, module);
      });
      return {};
    },
  } as unknown as Parameters<typeof initSqlJs>[0]);
}

/** Calls `listener` when the engine traps (once per trapped instance). */
export function onEngineTrapped(listener: () => void): () => void {
  engineState.onTrap.add(listener);
  return () => engineState.onTrap.delete(listener);
}

function noteTrap(err: unknown, generation: number): never {
  if (generation === engineState.generation && !engineState.trapped) {
    engineState.trapped = true;
    for (const l of engineState.onTrap) l();
  }
  throw new EngineTrapped(err);
}

/** What a trapped WebAssembly instruction throws (Node's types do not declare the global's value). */
const WasmRuntimeError = (globalThis as unknown as { WebAssembly: { RuntimeError: new () => Error } }).WebAssembly.RuntimeError;

/** Whether the instance that databases of `generation` live in can still be used. */
function alive(generation: number): boolean {
  return generation === engineState.generation && !engineState.trapped;
}

function bindable(params: SqlParams | undefined): Record<string, SqlValue> | SqlValue[] | undefined {
  if (!params || Array.isArray(params)) return params;
  const out: Record<string, SqlValue> = {};
  for (const [k, v] of Object.entries(params)) {
    const key = k.startsWith('@') || k.startsWith(':') || k.startsWith('$') ? k : `@${k}`;
    if (v === undefined) out[key] = null;
    else if (typeof v === 'bigint') out[key] = v.toString();
    else if (typeof v === 'boolean') out[key] = v ? 1 : 0;
    else out[key] = v;
  }
  return out;
}

interface SqlJsAggregateDb {
  create_aggregate(
    name: string,
    spec: { init: () => unknown; step: (s: unknown, ...a: SqlValue[]) => unknown; finalize: (s: unknown) => SqlValue },
  ): void;
}

class SqlJsDb implements Db {
  private statements = new Map<string, Statement>();
  private functions: Array<(db: Database) => void> = [];
  private inTransaction = false;
  private readonly generation = engineState.generation;

  constructor(private db: Database) {}

  /** Runs one call into sql.js; a trap marks the instance dead instead of leaving it in use. */
  private guard<T>(fn: () => T): T {
    if (!alive(this.generation)) throw new EngineTrapped();
    try {
      return fn();
    } catch (err) {
      if (err instanceof WasmRuntimeError) noteTrap(err, this.generation);
      throw err;
    }
  }

  private checkDeadline(): void {
    checkDeadline();
  }

  private prepared(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  exec(sql: string): void {
    this.guard(() => this.db.exec(sql));
  }

  run(sql: string, params?: SqlParams): number {
    return this.guard(() => {
      const stmt = this.prepared(sql);
      try {
        const b = bindable(params);
        if (b) stmt.bind(b);
        stmt.step();
      } finally {
        stmt.reset();
      }
      return this.db.getRowsModified();
    });
  }

  /** Steps one statement to the end, collecting each row as `read` shapes it. */
  private collect<R>(sql: string, params: SqlParams | undefined, read: (stmt: Statement) => R): R[] {
    return this.guard(() => this.collectRows(sql, params, read));
  }

  private collectRows<R>(sql: string, params: SqlParams | undefined, read: (stmt: Statement) => R): R[] {
    const stmt = this.prepared(sql);
    const out: R[] = [];
    try {
      const b = bindable(params);
      if (b) stmt.bind(b);
      while (stmt.step()) {
        out.push(read(stmt));
        this.checkDeadline();
      }
    } catch (err) {
      // A deadline hit inside SQL reaches here as sql.js's text error: give it its class back.
      if (deadlineState.timedOut) throw new QueryTimeout();
      throw err;
    } finally {
      stmt.reset();
    }
    return out;
  }

  query<T extends Row = Row>(sql: string, params?: SqlParams): T[] {
    // The column names read once per query: sql.js's getAsObject reads them again for every row,
    // which made a query five to eight times slower than `rows` (the catalog's 884 partition rows
    // of a 10M store, warm: 50-57 ms against 7-10).
    let names: string[] | undefined;
    return this.collect(sql, params, (stmt) => {
      names ??= stmt.getColumnNames();
      const values = stmt.get();
      const row: Row = {};
      for (let i = 0; i < names.length; i++) row[names[i]!] = values[i] as SqlValue;
      return row as T;
    });
  }

  rows(sql: string, params?: SqlParams): SqlValue[][] {
    return this.collect(sql, params, (stmt) => stmt.get() as SqlValue[]);
  }

  transaction<T>(fn: () => T): T {
    if (this.inTransaction) throw new Error('nested transaction');
    this.inTransaction = true;
    this.exec('BEGIN');
    try {
      const result = fn();
      this.exec('COMMIT');
      return result;
    } catch (err) {
      // A dead instance has nothing to roll back: the store reopens from its files.
      if (!(err instanceof EngineTrapped)) this.exec('ROLLBACK');
      throw err;
    } finally {
      this.inTransaction = false;
    }
  }

  defineFunction(name: string, fn: (...args: SqlValue[]) => SqlValue): void {
    const guarded = (...args: SqlValue[]) => {
      this.checkDeadline();
      const result = fn(...args);
      if (typeof result === 'string' && result.length > engineLimits.functionTextChars) {
        throw new Error(`${name} returned ${result.length} characters; SQL functions may return at most ${engineLimits.functionTextChars}`);
      }
      return result;
    };
    // sql.js takes the SQL arity from the function's length.
    Object.defineProperty(guarded, 'length', { value: fn.length });
    const register = (db: Database) => db.create_function(name, guarded);
    this.guard(() => register(this.db));
    this.functions.push(register);
  }

  defineAggregate<S>(name: string, spec: AggregateSpec<S>): void {
    const step = (s: unknown, ...a: SqlValue[]) => {
      this.checkDeadline();
      return spec.step(s as S, ...a);
    };
    // sql.js takes the SQL arity from step.length - 1; the wrapper must keep the original's.
    Object.defineProperty(step, 'length', { value: spec.step.length });
    const register = (db: Database) =>
      (db as unknown as SqlJsAggregateDb).create_aggregate(name, {
        init: spec.init,
        step,
        finalize: (s) => spec.finalize(s as S),
      });
    this.guard(() => register(this.db));
    this.functions.push(register);
  }

  exportImage(): Uint8Array {
    if (this.inTransaction) throw new Error('cannot export inside a transaction');
    return this.guard(() => {
      // sql.js frees every prepared statement and drops user functions when it exports.
      for (const s of this.statements.values()) s.free();
      this.statements.clear();
      const image = this.db.export();
      for (const register of this.functions) register(this.db);
      return image;
    });
  }

  close(): void {
    // A database of a dead instance is dropped, not closed: its memory is not touched again.
    if (!alive(this.generation)) return;
    this.guard(() => {
      for (const s of this.statements.values()) s.free();
      this.statements.clear();
      this.db.close();
    });
  }
}

export interface OpenOptions {
  /** SQLite's page cache, KiB. The file itself is in memory already, so a small cache suffices. */
  cacheKiB?: number;
  /**
   * The image is the caller's to give (read from a file for this database only): the in-memory
   * file takes its memory instead of a copy, and the caller never reads or writes it again. A
   * 10M-record hour is a 40 MB image; a scattered import loads hundreds of them, and each copy
   * was garbage held until V8 collected it.
   */
  handOver?: boolean;
}

let loaded: SqlJsStatic | undefined;
let loading: Promise<SqlJsStatic> | undefined;

/** Loads the engine once; afterwards openDbSync works. */
export async function loadEngine(): Promise<void> {
  loading ??= freshEngine();
  loaded ??= await loading;
}

/**
 * Replaces a trapped instance with a fresh one. Databases opened before are dead from now on
 * (their calls throw EngineTrapped); open them again from their files.
 */
export function replaceTrappedEngine(): Promise<void> {
  if (!engineState.trapped) return replacing ?? Promise.resolve();
  // Every store (and a test's several) waits for the one replacement.
  replacing ??= (async () => {
    try {
      loading = freshEngine();
      loaded = await loading;
      engineState.generation++;
      engineState.trapped = false;
    } finally {
      replacing = undefined;
    }
  })();
  return replacing;
}

let replacing: Promise<void> | undefined;

/** Whether the instance has trapped and waits to be replaced. */
export function engineTrapped(): boolean {
  return engineState.trapped;
}

/** Opens a database from a saved image, or an empty one. */
export async function openDb(image?: Uint8Array, opts: OpenOptions = {}): Promise<Db> {
  await loadEngine();
  return openDbSync(image, opts);
}

/** Like openDb, once loadEngine has run (partitions load in the middle of synchronous work). */
export function openDbSync(image?: Uint8Array, opts: OpenOptions = {}): Db {
  if (!loaded) throw new Error('the sql.js engine is not loaded yet');
  if (engineState.trapped) throw new EngineTrapped();
  // sql.js's in-memory file slices the first data written to it: a Buffer's slice is a view.
  const data = image && opts.handOver ? Buffer.from(image.buffer, image.byteOffset, image.byteLength) : image;
  const db = new loaded.Database(data);
  // The database lives in memory: a rollback journal in memory is enough, and there is no
  // disk to sync; durability comes from the atomic save of the whole image.
  db.exec('PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY;');
  if (opts.cacheKiB) db.exec(`PRAGMA cache_size = -${opts.cacheKiB}`);
  return new SqlJsDb(db);
}
