/**
 * The catalog as it is in memory (its tables: catalog.ts) and the dictionaries kept beside it:
 * project and function ids in its tables, per-hour API counts, the URL dictionary (urls.log,
 * committed with it) and the store-wide path dictionary (paths.log, derived). A rolled-back
 * import, a failed delete or a reopen replaces the catalog whole, and what is cached of it goes.
 */
import path from 'node:path';
import { ApiHours } from './api-hours.ts';
import { urlsState } from './catalog.ts';
import { Dictionary } from './catalog-dictionary.ts';
import { openDbSync, type Db } from './db.ts';
import { OpenRollups } from './rollups.ts';
import { pathOfUrl } from './record.ts';
import type { PathIds } from './scan-columns.ts';
import { PATHS_FILE, removeVersionFiles, URLS_FILE } from './store-files.ts';
import { TextDictionary } from './text-dictionary.ts';

export class CatalogState {
  /** The catalog database (dictionaries, partitions, summary, rollups). */
  db: Db;
  /** The in-memory catalog has changes no saved catalog holds. */
  dirty = false;
  /** Files no committed catalog refers to any more, deleted once no rollback may need them. */
  obsolete: string[] = [];
  readonly projects: Dictionary;
  readonly urls: TextDictionary;
  /** Every distinct request path, for the columns files' shared path ids. */
  readonly paths: TextDictionary;
  /** Path id of each URL id met so far (0: not yet); cleared when URL ids go back. */
  private urlPathIds = new Int32Array(0);
  /** The path ids columns are built with. */
  readonly pathIds: PathIds;
  readonly functions: Dictionary;
  readonly apiHours: ApiHours;
  /** The hour and day rollups an import is adding to (rollups.ts). */
  readonly rollups: OpenRollups;
  /** Bumps when dictionary ids may have been reused (a rolled-back import). */
  urlEpoch = 0;

  constructor(dataDir: string, catalog: Db) {
    this.db = catalog;
    const db = () => this.db;
    this.projects = new Dictionary(db, 'projects', 'ref', 10_000);
    this.urls = new TextDictionary(path.join(dataDir, URLS_FILE), urlsState(catalog));
    this.paths = new TextDictionary(path.join(dataDir, PATHS_FILE), 'derived');
    const paths = this.paths;
    this.pathIds = {
      get epoch() {
        return paths.epoch;
      },
      ofText: (text) => paths.idOf(text),
      ofUrl: (url) => this.pathIdOfUrl(url),
      prefetchUrls: (urls) => this.prefetchUrlPaths(urls),
    };
    this.functions = new Dictionary(db, 'functions', 'function_id', 10_000);
    this.apiHours = new ApiHours(db);
    this.rollups = new OpenRollups(db);
  }

  /** Replaces the catalog with an image of another (a rollback, a reopen); the dictionaries follow it. */
  replace(image: Uint8Array): void {
    this.db.close();
    this.db = openDbSync(image);
    this.resetCaches();
    this.resetUrls(urlsState(this.db));
  }

  resetCaches(): void {
    this.projects.reset();
    this.functions.reset();
    this.apiHours.reset();
    this.rollups.reset();
    this.urlEpoch++;
  }

  /** URL ids may be given again (a rolled-back import, a cleared source): their paths are forgotten. */
  resetUrls(state: { bytes: number; count: number }): void {
    this.urls.resetTo(state);
    this.urlPathIds = new Int32Array(0);
  }

  /**
   * The id of an edge record's URL, adding it when new; its path's id is noted while the text is
   * in hand, so building columns does not read the URL back from urls.log, a line at a time.
   */
  urlIdOf(url: string): number {
    const id = this.urls.idOf(url);
    this.pathOfUrlId(id, () => this.paths.idOf(pathOfUrl(url)));
    return id;
  }

  /** The path id of an edge URL's path, for the columns of edge partitions. */
  private pathIdOfUrl(url: number): number {
    return this.pathOfUrlId(url, () => this.paths.idOf(pathOfUrl(this.urls.get(url))));
  }

  /** Notes the path ids of URLs not met yet in this run, their texts read from urls.log together. */
  private prefetchUrlPaths(urls: readonly number[]): void {
    const unknown = urls.filter((url) => !(url < this.urlPathIds.length && this.urlPathIds[url]));
    if (!unknown.length) return;
    const texts = this.urls.getMany(unknown);
    const ids = [...texts.keys()];
    const pathIds = this.paths.idsOf(ids.map((url) => pathOfUrl(texts.get(url)!)));
    ids.forEach((url, i) => this.pathOfUrlId(url, () => pathIds[i]!));
  }

  /** The path id noted for a URL id, noting `find()`'s when there is none yet. */
  private pathOfUrlId(url: number, find: () => number): number {
    if (url >= this.urlPathIds.length) {
      const grown = new Int32Array(Math.max(url + 1, this.urlPathIds.length * 2, 1024));
      grown.set(this.urlPathIds);
      this.urlPathIds = grown;
    }
    return (this.urlPathIds[url] ||= find());
  }

  deleteObsolete(): void {
    for (const f of this.obsolete.splice(0)) removeVersionFiles(f);
  }
}
