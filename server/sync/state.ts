/**
 * What a user sees of each source's sync besides its cursor, kept across restarts in the data
 * folder's `sync-state.json`, next to `connections.json`: when a page was last stored (the
 * "synced 40 s ago"), what holds a source or its connection (a refused token, a 429's pause, a
 * back-off, a request the remote refused), the warnings, and the calls of the last minute (the
 * platform still counts them after a restart). The cursor and the record counts are
 * not here: they are committed with the records they cover, in the store's catalog (engine.ts),
 * and a restart resumes from there whatever this file says.
 *
 * Written whole and atomically (temp file, fsync, rename), at most once per WRITE_DELAY_MS and
 * when the sync stops: a backfill commits pages back to back, and a write per page would cost
 * more than the page. A `kill -9` loses at most that delay of it. A file that cannot be read is
 * ignored with one logged line: the sync resumes from the store's cursors with nothing to show
 * until its next page, and the next write replaces the file.
 */
import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import type { SyncErrorKind } from '../../contract/api-types.ts';
import { syncDir, writeSynced } from '../store/durable.ts';
import type { BudgetCall } from './rate-budget.ts';

export const SYNC_STATE_FILE = 'sync-state.json';
/** Changes are written this long after the first one (ms). */
export const WRITE_DELAY_MS = 1000;

/** A refusal that holds until the user resumes the connection or gives a new token. */
export interface SavedRefusal {
  message: string;
  status: number | null;
}

export interface SavedSourceState {
  /** When a page was last committed (µs on the sync's clock). */
  syncedAt: number | null;
  /** The remote refused this source's requests. */
  refused: SavedRefusal | null;
  /** A 5xx, a network failure or a page the store could not keep: no call before `until` (µs); `count` sets the next wait. */
  backoff: { until: number; count: number; message: string; kind: Extract<SyncErrorKind, 'remote' | 'store'>; status: number | null } | null;
  warnings: string[];
}

export interface SavedConnectionState {
  /** A 401/403: every source of the connection waits for a resume or a new token. */
  auth: SavedRefusal | null;
  /** A 429: no call of the connection before `until` (µs). */
  rateLimited: { until: number; message: string | null } | null;
  /** By source name. */
  sources: Record<string, SavedSourceState>;
}

export interface SavedState {
  /** By connection id. */
  connections: Record<string, SavedConnectionState>;
  /** The app's calls of the last minute (rate-budget.ts). */
  budget: BudgetCall[];
}

const NOTHING_SAVED: SavedState = { connections: {}, budget: [] };

const refusalSchema = z.object({ message: z.string(), status: z.number().int().nullable() }).nullable();
const fileSchema = z.object({
  version: z.literal(1),
  connections: z.record(
    z.string(),
    z.object({
      auth: refusalSchema,
      rateLimited: z.object({ until: z.number().int(), message: z.string().nullable() }).nullable(),
      sources: z.record(
        z.string(),
        z.object({
          syncedAt: z.number().int().nullable(),
          refused: refusalSchema,
          backoff: z
            .object({ until: z.number().int(), count: z.number().int().nonnegative(), message: z.string(), kind: z.enum(['remote', 'store']), status: z.number().int().nullable() })
            .nullable(),
          warnings: z.array(z.string()),
        }),
      ),
    }),
  ),
  budget: z.array(z.object({ at: z.number().int(), who: z.string() })),
});

export class SyncStateFile {
  #timer: NodeJS.Timeout | null = null;
  #writing: Promise<void> = Promise.resolve();

  private constructor(
    readonly dataDir: string,
    /** What the file held when it was opened. */
    readonly loaded: SavedState,
    private readonly snapshot: () => SavedState,
    private readonly delayMs: number,
  ) {}

  get file(): string {
    return path.join(this.dataDir, SYNC_STATE_FILE);
  }

  /** Reads the file (none, or one that cannot be read: nothing saved); `snapshot` gives what to write. */
  static open(dataDir: string, snapshot: () => SavedState, delayMs = WRITE_DELAY_MS): SyncStateFile {
    const file = path.join(dataDir, SYNC_STATE_FILE);
    fs.rmSync(`${file}.tmp`, { force: true });
    return new SyncStateFile(dataDir, readState(file), snapshot, delayMs);
  }

  /** Something to keep changed: written within the delay. */
  changed(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.flush();
    }, this.delayMs);
    // A pending write never keeps the process alive: stopping the sync writes it.
    this.#timer.unref();
  }

  /** Writes what the sync holds now, after any write in progress. Never throws: failures are logged. */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const run = this.#writing.then(() => this.#write(this.snapshot()));
    this.#writing = run;
    return run;
  }

  async #write(state: SavedState): Promise<void> {
    const file = this.file;
    const tmp = `${file}.tmp`;
    try {
      await writeSynced(tmp, `${JSON.stringify({ version: 1, ...state })}\n`);
      await fs.promises.rename(tmp, file);
      await syncDir(this.dataDir);
    } catch (err) {
      await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
      // What is lost is only what the cards show until the next page: the cursors are in the store.
      console.warn(`sync: could not save ${file}: ${(err as Error).message}`);
    }
  }
}

function readState(file: string): SavedState {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') console.warn(`sync: could not read ${file} (${(err as Error).message}); ignored it, the syncs resume from the store's cursors`);
    return NOTHING_SAVED;
  }
  let problem: string;
  try {
    const checked = fileSchema.safeParse(JSON.parse(text));
    if (checked.success) return { connections: checked.data.connections, budget: checked.data.budget };
    const issue = checked.error.issues[0];
    problem = `unexpected content at ${issue?.path.join('.') || 'the top'}: ${issue?.message ?? 'invalid'}`;
  } catch (err) {
    problem = `not JSON (${(err as Error).message})`;
  }
  console.warn(`sync: ${file} could not be read (${problem}); ignored it, the syncs resume from the store's cursors`);
  return NOTHING_SAVED;
}
