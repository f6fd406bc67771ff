/**
 * Saved views and recent searches: one small JSON file in the data folder,
 * `views.json`, read at start and rewritten whole at each change, atomically (temp file, fsync,
 * rename, folder fsync), as the catalog is (docs/ARCHITECTURE.md, "Commit protocol").
 */
import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { MAX_SEARCH_LABEL_CHARS, MAX_VIEW_NAME_CHARS, VIEW_PAGES, type RecentSearch, type SavedView } from '../../contract/views.ts';
import { syncDir, writeSynced } from './durable.ts';

export type { RecentSearch, SavedView };

export const VIEWS_FILE = 'views.json';
export const MAX_SAVED_VIEWS = 200;
export const MAX_RECENT_SEARCHES = 20;
export const MAX_VIEW_STATE_BYTES = 4096;

export interface ViewsData {
  /** Newest first. */
  readonly views: readonly SavedView[];
  /** Newest first, at most MAX_RECENT_SEARCHES. */
  readonly searches: readonly RecentSearch[];
}

// ---- field rules, shared by the API and the file reader ----

// C0, DEL and C1 controls: a name or label is one line of text.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/**
 * Text with nothing a reader can see: separators and other blanks, zero-width and formatting
 * characters (U+200B, bidi controls such as U+202E, U+FEFF), combining marks with nothing to
 * combine with, and the other default-ignorable code points (U+3164 HANGUL FILLER).
 */
const INVISIBLE = /^[\p{Z}\p{Cc}\p{Cf}\p{Mn}\p{Me}\p{Default_Ignorable_Code_Point}\s]*$/u;
const chars = (s: string) => [...s].length;
const required = (name: string, kind: string) => (iss: { input?: unknown }) => (iss.input === undefined ? `${name} is required` : `${name} must be ${kind}`);

/** A name as views.json may hold it: what earlier versions saved, so their files still load. */
const storedName = (s: z.ZodString) =>
  s
    .trim()
    .refine((t) => t.length > 0, { message: 'name must not be empty', abort: true })
    .refine((t) => chars(t) <= MAX_VIEW_NAME_CHARS, { message: `name is longer than ${MAX_VIEW_NAME_CHARS} characters`, abort: true })
    .refine((t) => !CONTROL.test(t), { message: 'name must not contain control characters (one line of text)' });

/**
 * A new name (the API's): an empty one is `required` (the routes read `params.reason`); one
 * with nothing visible in it is refused too, since it could not be told apart in a list.
 */
export const viewNameSchema = storedName(
  z
    .string({ error: required('name', 'a string') })
    .refine((t) => t.length > 0, { message: 'name must not be empty', abort: true, params: { reason: 'required' } })
    .refine((t) => !INVISIBLE.test(t), { message: 'name must have a visible character; it holds only blanks, zero-width or formatting characters, or combining marks', abort: true }),
);

export const viewPageSchema = z.enum(VIEW_PAGES, { error: required('page', `one of ${VIEW_PAGES.join(', ')}`) });

/** A query string; a leading `?` is dropped. Never a fragment: that is where the API key travels. */
export const viewStateSchema = z
  .string({ error: required('state', 'a string (the URL query string)') })
  .transform((s) => (s.startsWith('?') ? s.slice(1) : s))
  .refine((s) => Buffer.byteLength(s, 'utf8') <= MAX_VIEW_STATE_BYTES, { message: `state is longer than ${MAX_VIEW_STATE_BYTES} bytes (4 KiB)`, abort: true })
  .refine((s) => !s.includes('#'), { message: 'state must be a URL query string without a fragment (#)', abort: true })
  .refine((s) => !/[\s\u0000-\u001f\u007f]/.test(s), { message: 'state must be a URL query string (no spaces or control characters)' });

export const searchLabelSchema = z
  .string({ error: required('label', 'a string') })
  .trim()
  .refine((s) => chars(s) <= MAX_SEARCH_LABEL_CHARS, { message: `label is longer than ${MAX_SEARCH_LABEL_CHARS} characters`, abort: true })
  .refine((s) => !CONTROL.test(s), { message: 'label must not contain control characters (one line of text)' });

const fileSchema = z.object({
  version: z.literal(1),
  views: z.array(z.object({ id: z.string().min(1), name: storedName(z.string()), page: viewPageSchema, state: viewStateSchema, createdAt: z.string() })),
  searches: z.array(z.object({ id: z.string().min(1), page: viewPageSchema, state: viewStateSchema, label: searchLabelSchema, at: z.string() })),
});

/** Names compare trimmed, NFC-normalized and case-insensitively: "Errors" and "errors" would be confusing side by side. */
export function sameViewName(a: string, b: string): boolean {
  return a.normalize('NFC').toLowerCase() === b.normalize('NFC').toLowerCase();
}

const EMPTY: ViewsData = Object.freeze({ views: Object.freeze([]), searches: Object.freeze([]) });

/**
 * The saved views and searches of one data folder. Changes run one at a time; each writes the
 * whole file and only then replaces the in-memory lists, so a refused write (a full disk)
 * leaves memory and disk as they were.
 */
export class ViewStore {
  #data: ViewsData;
  #tail: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly dataDir: string,
    data: ViewsData,
  ) {
    this.#data = data;
  }

  get file(): string {
    return path.join(this.dataDir, VIEWS_FILE);
  }

  /**
   * Reads `views.json` (synchronously: the app is built synchronously). A file that cannot be
   * read or does not hold the expected shape is moved aside as `views.json.corrupt-<time>`
   * with a warning, and the lists start empty: a damaged file never stops the server.
   */
  static open(dataDir: string): ViewStore {
    const file = path.join(dataDir, VIEWS_FILE);
    // A temp file is what a crash during a write leaves; the committed file is the one to read.
    try {
      fs.rmSync(`${file}.tmp`, { force: true });
    } catch (err) {
      console.warn(`saved views: cannot remove ${file}.tmp (${(err as Error).message}); the next change will replace it`);
    }
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
      // Editors on Windows save UTF-8 with a byte order mark; JSON.parse refuses it. The next change writes the file without.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new ViewStore(dataDir, EMPTY);
      return new ViewStore(dataDir, moveAside(file, (err as Error).message));
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      return new ViewStore(dataDir, moveAside(file, `not JSON (${(err as Error).message})`));
    }
    const checked = fileSchema.safeParse(parsed);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      return new ViewStore(dataDir, moveAside(file, `unexpected content at ${issue?.path.join('.') || 'the top'}: ${issue?.message ?? 'invalid'}`));
    }
    return new ViewStore(dataDir, { views: checked.data.views, searches: checked.data.searches.slice(0, MAX_RECENT_SEARCHES) });
  }

  /** The committed lists (what the file holds). */
  get data(): ViewsData {
    return this.#data;
  }

  /**
   * Runs one change: `fn` gets the committed lists and returns the next ones (new arrays; it
   * may throw to refuse, changing nothing) and a result. The file is written before memory
   * changes; a write that fails (ENOSPC on a full disk) is thrown and nothing changes.
   */
  change<T>(fn: (current: ViewsData) => { next: ViewsData; result: T }): Promise<T> {
    const run = this.#tail.then(async () => {
      const { next, result } = fn(this.#data);
      await this.#write(next);
      this.#data = next;
      return result;
    });
    // The queue goes on after a refused change.
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async #write(data: ViewsData): Promise<void> {
    const file = this.file;
    const tmp = `${file}.tmp`;
    const text = `${JSON.stringify({ version: 1, views: data.views, searches: data.searches }, null, 1)}\n`;
    try {
      await writeSynced(tmp, text);
      await fs.promises.rename(tmp, file);
    } catch (err) {
      await fs.promises.rm(tmp, { force: true }).catch(() => undefined);
      throw err;
    }
    try {
      await syncDir(this.dataDir);
    } catch (err) {
      // The rename happened: the change is visible and will be read back; only its durability
      // through a power loss is unsure, which is no reason to report the change as refused.
      console.warn(`saved views: could not sync ${this.dataDir} after writing ${VIEWS_FILE}: ${(err as Error).message}`);
    }
  }
}

function moveAside(file: string, reason: string): ViewsData {
  // No colons: the name must be valid on Windows too.
  const aside = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  try {
    fs.renameSync(file, aside);
    console.warn(`saved views: ${file} could not be read (${reason}); moved it to ${aside} and started with no saved views or searches`);
  } catch (err) {
    console.warn(`saved views: ${file} could not be read (${reason}) nor moved aside (${(err as Error).message}); starting with no saved views or searches`);
  }
  return EMPTY;
}

