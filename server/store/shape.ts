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

/** Sets a key as an own property, `__proto__` included (plain assignment would set the prototype). */
export function setOwn(obj: JsonObject, key: string, value: Json): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/**
 * A record's fields in the query shape. Built with an explicit stack, not recursion, so no
 * nesting depth can exhaust the call stack; keys keep their order.
 */
function recordFields(root: JsonObject): JsonObject {
  const out: JsonObject = {};
  const work: Array<[JsonObject, JsonObject]> = [[root, out]];
  const copyOf = (src: JsonObject): JsonObject => {
    const dst: JsonObject = {};
    work.push([src, dst]);
    return dst;
  };
  for (let task = work.pop(); task; task = work.pop()) {
    const [src, dst] = task;
    for (const key of Object.keys(src)) {
      const v = src[key] as Json;
      if (isObject(v)) setOwn(dst, key, [copyOf(v)]);
      else if (Array.isArray(v)) setOwn(dst, key, v.map((e) => (isObject(e) ? copyOf(e) : e)));
      else setOwn(dst, key, v);
    }
  }
  return out;
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
    for (const k of Object.keys(o)) setOwn(out, k, unwrap(o[k] as Json));
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

/**
 * Whether a value nests objects and arrays deeper than `max` levels (a scalar is level 0, `{}`
 * level 1). Walked with an explicit stack, so any depth is measured safely.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const work: Array<[unknown, number]> = [[value, 1]];
  for (let task = work.pop(); task; task = work.pop()) {
    const [v, depth] = task;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) work.push([child, depth + 1]);
    }
  }
  return false;
}
