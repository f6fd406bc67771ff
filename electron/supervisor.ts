/**
 * Supervises the server process: spawns it, hands it a fresh key, waits until it answers,
 * relays imports, keeps the last lines it logged, reports a crash and restarts it.
 *
 * It knows the process only through `ServerProcess`, so the same code drives an Electron
 * utilityProcess (main.ts) and a plain `child_process.fork` (tests, `forkNodeServer`).
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import readline from 'node:readline';
import { waitForServer, type Fetch } from './app-api.ts';
import type { ImportFileOutcome, ImportFilesOptions } from './bridge.ts';
import { parseFromServer, type FromServer, type LogLevel, type StartConfig, type ToServer } from './protocol.ts';

/** The little the supervisor needs from a child process. */
export interface ServerProcess {
  readonly pid: number | undefined;
  postMessage(message: ToServer): void;
  /** Ends the process now (SIGTERM where there are signals). */
  kill(): void;
  onMessage(listener: (message: unknown) => void): void;
  /** Called once when the process is gone; code null when a signal ended it. */
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  /** Lines written to stdout/stderr outside the log protocol (a fatal stack trace lands here). */
  onOutput(listener: (line: string, stream: 'stdout' | 'stderr') => void): void;
}

export type SpawnServer = () => ServerProcess;

export interface ServerReady {
  url: string;
  port: number;
  /** `http://127.0.0.1:PORT`: the only origin the window may show and IPC may come from. */
  origin: string;
  apiKey: string;
  pid: number | undefined;
}

export interface ServerCrash {
  code: number | null;
  signal: string | null;
  /** The last lines the process logged, oldest first. */
  lastLines: string[];
  message: string;
}

export class ServerStartError extends Error {
  constructor(
    message: string,
    readonly lastLines: string[],
  ) {
    super(message);
  }
}

export type SupervisorState = 'idle' | 'starting' | 'ready' | 'crashed' | 'stopping' | 'stopped';

export interface ImportProgress {
  file: string;
  index: number;
  count: number;
  bytes: number;
  totalBytes: number;
}

export interface SupervisorOptions {
  spawn: SpawnServer;
  /** Everything the server process needs but the key, which is made fresh for every start. */
  config: Omit<StartConfig, 'apiKey'>;
  newApiKey?: () => string;
  /** From spawn to answering GET /api/clock; opening a large store takes a while. */
  readyTimeoutMs?: number;
  /** From asking the process to save and exit to killing it. */
  shutdownTimeoutMs?: number;
  /** How many log lines to keep for the crash report. */
  keepLines?: number;
  fetch?: Fetch;
  /** Every line the process logs, as it arrives. */
  onLog?: (line: string, level: LogLevel) => void;
}

export function describeExit(code: number | null, signal: string | null): string {
  if (signal) return `killed by ${signal}`;
  return code === null ? 'ended' : `exit code ${code}`;
}

interface Pending {
  resolve: (results: ImportFileOutcome[]) => void;
  reject: (err: Error) => void;
}

export class ServerSupervisor {
  private readonly opts: Required<Omit<SupervisorOptions, 'fetch' | 'onLog'>> & Pick<SupervisorOptions, 'fetch' | 'onLog'>;
  private child: ServerProcess | undefined;
  private childExit: Promise<void> = Promise.resolve();
  private childAlive = false;
  /** Bumped for every process, so events of a replaced one are ignored. */
  private generation = 0;
  private _state: SupervisorState = 'idle';
  private _current: ServerReady | undefined;
  private lines: string[] = [];
  private readonly events = new EventEmitter();
  private readonly pending = new Map<number, Pending>();
  private nextImportId = 1;

  constructor(options: SupervisorOptions) {
    this.opts = {
      newApiKey: () => randomBytes(24).toString('base64url'),
      readyTimeoutMs: 60_000,
      shutdownTimeoutMs: 30_000,
      keepLines: 200,
      ...options,
    };
  }

  get state(): SupervisorState {
    return this._state;
  }

  /** The running server, while it is ready. */
  get current(): ServerReady | undefined {
    return this._current;
  }

  lastLines(): string[] {
    return [...this.lines];
  }

  /** Called when a server that was ready dies (not for a failed start: `start()` rejects then). */
  onCrash(listener: (crash: ServerCrash) => void): () => void {
    this.events.on('crash', listener);
    return () => this.events.off('crash', listener);
  }

  onImportProgress(listener: (progress: ImportProgress) => void): () => void {
    this.events.on('progress', listener);
    return () => this.events.off('progress', listener);
  }

  /** Spawns the server and resolves once it answers with its key. */
  start(): Promise<ServerReady> {
    if (this._state === 'starting' || this._state === 'ready' || this._state === 'stopping') {
      return Promise.reject(new Error(`cannot start: the server is ${this._state}`));
    }
    return this.launch();
  }

  /** Stops the current process if any (saving, like a quit), then starts a new one: new port, new key. */
  async restart(): Promise<ServerReady> {
    if (this._state === 'stopping') throw new Error('cannot restart while shutting down');
    const old = this.child;
    if (old && this.childAlive) {
      this.generation++; // the old process's exit is no crash
      this._current = undefined;
      this.failPending(new Error('the server restarted'));
      await this.stopProcess(old, this.childExit);
    }
    return this.launch();
  }

  /** Asks the server to save and exit; kills it if it has not exited in time. */
  async shutdown(): Promise<void> {
    const child = this.child;
    if (!child || !this.childAlive) {
      this._state = 'stopped';
      return;
    }
    this._state = 'stopping';
    this._current = undefined;
    await this.stopProcess(child, this.childExit);
    this._state = 'stopped';
  }

  /** Imports files by path in the server process (no copy through HTTP), with the given source and project; one outcome per file. */
  importFiles(files: readonly string[], options: ImportFilesOptions = {}): Promise<ImportFileOutcome[]> {
    const { source, project } = options;
    const child = this.child;
    if (this._state !== 'ready' || !child) return Promise.reject(new Error(`the server is ${this._state}`));
    const id = this.nextImportId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try {
        child.postMessage({ type: 'import', id, files: [...files], ...(source ? { source } : {}), ...(project ? { project } : {}) });
      } catch (err) {
        this.pending.delete(id);
        reject(err as Error);
      }
    });
  }

  private async stopProcess(child: ServerProcess, exited: Promise<void>): Promise<void> {
    const timeout = (ms: number) => new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms).unref());
    try {
      child.postMessage({ type: 'shutdown' });
    } catch {
      // channel already closed: the kill below settles it
    }
    if ((await Promise.race([exited.then(() => 'exited' as const), timeout(this.opts.shutdownTimeoutMs)])) === 'timeout') {
      this.record(`the server did not exit within ${this.opts.shutdownTimeoutMs} ms of shutdown; killing it`, 'warn');
      child.kill();
      await Promise.race([exited, timeout(5_000)]);
    }
  }

  private record(text: string, level: LogLevel): void {
    for (const line of text.split(/\r?\n/)) {
      if (line === '') continue;
      this.lines.push(line);
      this.opts.onLog?.(line, level);
    }
    if (this.lines.length > this.opts.keepLines) this.lines.splice(0, this.lines.length - this.opts.keepLines);
  }

  private failPending(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  private launch(): Promise<ServerReady> {
    const gen = ++this.generation;
    const apiKey = this.opts.newApiKey();
    this._state = 'starting';
    this._current = undefined;
    this.lines = [];
    const child = this.opts.spawn();
    this.child = child;
    this.childAlive = true;
    let markExited!: () => void;
    this.childExit = new Promise<void>((r) => (markExited = r));

    return new Promise<ServerReady>((resolve, reject) => {
      let settled = false;
      const deadline = Date.now() + this.opts.readyTimeoutMs;
      const fail = (message: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (gen === this.generation && this._state === 'starting') this._state = 'crashed';
        reject(new ServerStartError(message, this.lastLines()));
      };
      const timer = setTimeout(() => {
        fail(`the server did not become ready within ${this.opts.readyTimeoutMs} ms`);
        child.kill();
      }, this.opts.readyTimeoutMs);

      child.onOutput((line, stream) => {
        if (gen === this.generation) this.record(line, stream === 'stderr' ? 'error' : 'info');
      });

      child.onMessage((raw) => {
        if (gen !== this.generation) return;
        const m: FromServer | undefined = parseFromServer(raw);
        if (!m) return;
        switch (m.type) {
          case 'hello':
            child.postMessage({ type: 'start', config: { ...this.opts.config, apiKey } });
            break;
          case 'log':
            this.record(m.text, m.level);
            break;
          case 'fatal':
            this.record(m.message, 'error');
            fail(m.message);
            break;
          case 'ready':
            if (settled) break;
            waitForServer({ url: m.url, apiKey }, { timeoutMs: Math.max(1_000, deadline - Date.now()), ...(this.opts.fetch ? { fetch: this.opts.fetch } : {}) }).then(
              () => {
                if (settled || gen !== this.generation || !this.childAlive) return;
                settled = true;
                clearTimeout(timer);
                this._current = { url: m.url, port: m.port, origin: new URL(m.url).origin, apiKey, pid: child.pid };
                this._state = 'ready';
                resolve(this._current);
              },
              (err: Error) => {
                fail(err.message);
                child.kill();
              },
            );
            break;
          case 'import-progress':
            this.events.emit('progress', { file: m.file, index: m.index, count: m.count, bytes: m.bytes, totalBytes: m.totalBytes } satisfies ImportProgress);
            break;
          case 'import-done': {
            const p = this.pending.get(m.id);
            this.pending.delete(m.id);
            p?.resolve(m.results);
            break;
          }
        }
      });

      child.onExit((code, signal) => {
        if (child === this.child) this.childAlive = false;
        markExited();
        if (gen !== this.generation) return;
        const how = describeExit(code, signal);
        this.failPending(new Error(`the server process stopped (${how}) during the import`));
        if (this._state === 'stopping') {
          fail('the server was stopped before it was ready');
          return;
        }
        if (!settled) {
          fail(`the server process exited (${how}) before it was ready`);
          return;
        }
        const wasReady = this._state === 'ready';
        this._state = 'crashed';
        this._current = undefined;
        if (wasReady) {
          this.events.emit('crash', { code, signal, lastLines: this.lastLines(), message: `The server process stopped unexpectedly (${how}).` } satisfies ServerCrash);
        }
      });
    });
  }
}

/** Calls `onLine` for every line of a stream. */
export function forEachLine(stream: NodeJS.ReadableStream | null | undefined, onLine: (line: string) => void): void {
  if (!stream) return;
  readline.createInterface({ input: stream, crlfDelay: Infinity }).on('line', onLine);
}

export interface NodeForkOptions {
  /** e.g. ['--import', 'tsx'] to run the TypeScript entry directly. */
  execArgv?: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** The server process as a Node child (`child_process.fork`): what tests and plain-Node tools use. */
export function forkNodeServer(entry: string, options: NodeForkOptions = {}): SpawnServer {
  return () => {
    const child = fork(entry, [], {
      execArgv: options.execArgv ?? [],
      ...(options.cwd ? { cwd: options.cwd } : {}),
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
    });
    const exit = new EventEmitter();
    let exited = false;
    const done = (code: number | null, signal: string | null) => {
      if (exited) return;
      exited = true;
      exit.emit('exit', code, signal);
    };
    child.on('exit', done);
    // A failed spawn emits 'error' and may never emit 'exit'.
    child.on('error', (err) => {
      exit.emit('output', `cannot run the server process: ${err.message}`, 'stderr');
      if (child.pid === undefined) done(null, null);
    });
    return {
      get pid() {
        return child.pid;
      },
      postMessage(message) {
        if (child.connected) child.send(message, (err) => err && exit.emit('output', `message not delivered: ${err.message}`, 'stderr'));
      },
      kill() {
        child.kill();
      },
      onMessage: (listener) => void child.on('message', listener),
      onExit: (listener) => void exit.on('exit', listener),
      onOutput(listener) {
        exit.on('output', listener);
        forEachLine(child.stdout, (line) => listener(line, 'stdout'));
        forEachLine(child.stderr, (line) => listener(line, 'stderr'));
      },
    };
  };
}
