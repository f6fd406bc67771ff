/**
 * Loads the endpoints' SQL files (queries/*.sql), which the registry names but does not read
 * (queries/registry.ts is data only). In the sources this module is server/endpoints/, two
 * folders below queries/. In a bundle (scripts/run-server.mjs, electron/build.ts) its
 * `import.meta.url` is the bundle's own URL, and both builds copy the .sql files next to the
 * bundle, so that folder is where they are.
 */
import fs from 'node:fs';
import { ENDPOINTS, type EndpointDefinition } from '../../queries/registry.ts';

/** True when this code runs from its own source file, not from a bundle. */
function fromSources(moduleUrl: string): boolean {
  return /\/server\/endpoints\/sql-files\.[cm]?[jt]s$/.test(new URL(moduleUrl).pathname);
}

/** The folder holding the .sql files, as a URL ending in `/`. */
export function sqlDirectory(moduleUrl: string = import.meta.url): URL {
  return new URL(fromSources(moduleUrl) ? '../../queries/' : './', moduleUrl);
}

const texts = new Map<string, string>();

/** The text of one SQL file of the queries folder (read once). */
export function readSqlFile(file: string): string {
  // A bare file name only: the registry names files in that one folder.
  if (!/^[\w.-]+\.sql$/.test(file)) throw new Error(`not an endpoint SQL file name: ${file}`);
  let text = texts.get(file);
  if (text === undefined) {
    const url = new URL(file, sqlDirectory());
    try {
      text = fs.readFileSync(url, 'utf8');
    } catch (err) {
      throw new Error(`the endpoint query ${file} is missing from ${sqlDirectory().pathname}: ${(err as Error).message}`);
    }
    texts.set(file, text);
  }
  return text;
}

/** An endpoint's SQL: its own text when it carries one, else its file's. */
export function endpointSql(def: EndpointDefinition): string {
  return def.sql ?? readSqlFile(def.sqlFile);
}

// Read at load, as the registry once did: a bundle shipped without its queries fails at start,
// not at the first query.
for (const def of ENDPOINTS) endpointSql(def);
