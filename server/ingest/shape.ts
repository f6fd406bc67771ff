/**
 * The two shapes of `metadata` (docs/ARCHITECTURE.md, "Import"). The ingest shape nests plain objects
 * (`metadata.request.path`); the query shape, as BigQuery returns it, wraps every nested
 * record in a one-element array (`metadata[0].request[0].path`). Repeated records (arrays
 * of objects) stay arrays whose elements are records; arrays of scalars stay as they are.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function recordFields(obj: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(obj)) out[key] = fieldValue(obj[key] as Json);
  return out;
}

function fieldValue(v: Json): Json {
  if (isObject(v)) return [recordFields(v)];
  if (Array.isArray(v)) return v.map((e) => (isObject(e) ? recordFields(e) : e));
  return v;
}

/**
 * Converts `metadata` in either shape to the query shape. Idempotent: a value already in the
 * query shape comes back equal, so mixed or re-exported files normalize the same way.
 */
export function toQueryShape(metadata: Json | undefined): Json[] {
  if (metadata === undefined || metadata === null) return [];
  if (Array.isArray(metadata)) return metadata.map((e) => (isObject(e) ? recordFields(e) : e));
  if (isObject(metadata)) return [recordFields(metadata)];
  return [metadata];
}

/** The inverse for one-element wrappers: query shape back to plain nested objects. */
export function toIngestShape(metadata: Json | undefined): Json {
  const unwrap = (v: Json): Json => {
    if (Array.isArray(v)) {
      if (v.length === 1 && isObject(v[0])) return unwrapObject(v[0]);
      return v.map((e) => (isObject(e) ? unwrapObject(e) : e));
    }
    return v;
  };
  const unwrapObject = (o: JsonObject): JsonObject => {
    const out: JsonObject = {};
    for (const k of Object.keys(o)) out[k] = unwrap(o[k] as Json);
    return out;
  };
  if (metadata === undefined) return {};
  return unwrap(metadata);
}

/**
 * Reads a value by key path from metadata in the query shape (or the ingest shape):
 * one-element arrays of records are stepped through transparently.
 */
export function pick(metadata: Json | undefined, path: readonly string[]): Json | undefined {
  let cur: Json | undefined = metadata;
  for (const key of path) {
    while (Array.isArray(cur)) {
      if (cur.length === 0) return undefined;
      cur = cur[0];
    }
    if (!isObject(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}
