/**
 * What the store says when its files are not what it wrote (docs/ARCHITECTURE.md, "Damaged
 * files"): a committed file that fails a check is named, never read as if it were whole, and
 * never deleted; a derived file that fails is rebuilt and needs no error.
 */
import path from 'node:path';

/** What to do about a damaged committed file, said once for every message. */
export const DAMAGE_ADVICE = 'restore the data folder (or this file) from a backup, or delete the source and import it again; `npm run check -- --data-dir DIR` lists every damaged file';

/**
 * A committed file of the store is missing, shorter than the catalog says, or fails its
 * checksum or its decoding. Requests that need it answer 503 with this message; the others go on.
 */
export class StoreFileDamaged extends Error {
  constructor(
    /** The file, relative to the data folder (`parts/edge_logs/20261121-v3.sqlite`). */
    readonly file: string,
    /** What is wrong with it, in a few words. */
    readonly problem: string,
  ) {
    super(`the store file ${file} is damaged (${problem}); ${DAMAGE_ADVICE}`);
    this.name = 'StoreFileDamaged';
  }
}

/** The store refuses to open a folder (its catalog is missing while its files are there). */
export class StoreRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreRefused';
  }
}

/** A file's name relative to the data folder, with forward slashes (what messages show). */
export function relativeName(dataDir: string, file: string): string {
  return path.relative(dataDir, file).split(path.sep).join('/');
}

/** A partition file's name as messages show it: `parts/<alias>/<file>`. */
export function partFileName(file: string): string {
  return ['parts', path.basename(path.dirname(file)), path.basename(file)].join('/');
}

/** The damaged files found so far, by name (a file stays named until the store is reopened). */
export class DamageRegistry {
  private readonly found = new Map<string, string>();

  constructor(private readonly dataDir: string) {}

  /** Records a damaged file and returns the error to throw. */
  report(file: string, problem: string): StoreFileDamaged {
    const name = relativeName(this.dataDir, file);
    if (!this.found.has(name)) {
      this.found.set(name, problem);
      console.error(`damaged store file: ${name}: ${problem}`);
    }
    return new StoreFileDamaged(name, problem);
  }

  /** Records a damaged file met while answering a request. */
  note(err: StoreFileDamaged): void {
    if (this.found.has(err.file)) return;
    this.found.set(err.file, err.problem);
    console.error(`damaged store file: ${err.file}: ${err.problem}`);
  }

  /** Throws the file's error if it was found damaged. */
  check(file: string): void {
    const name = relativeName(this.dataDir, file);
    const problem = this.found.get(name);
    if (problem !== undefined) throw new StoreFileDamaged(name, problem);
  }

  has(file: string): boolean {
    return this.found.has(relativeName(this.dataDir, file));
  }

  list(): Array<{ file: string; problem: string }> {
    return [...this.found].map(([file, problem]) => ({ file, problem }));
  }

  clear(): void {
    this.found.clear();
  }
}
