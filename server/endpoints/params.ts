/**
 * Request parameters, validated once at the edge (zod schemas built from the registry's
 * declarations). Inside, the query runner receives typed bind values only: the declared ones,
 * and the registry entry's rules for them (window, retention, row cut, error rule), so the SQL
 * and the speed paths read the same values from one place.
 */
import * as z from 'zod';
import { MAX_PATTERN_LENGTH } from '../../contract/registry.ts';
import type { EndpointDefinition, ParamSpec } from '../../queries/registry.ts';
import { badParam, badParams, type ErrorDetail } from '../errors.ts';
import { INSTANT_RANGE, readIsoMicros } from '../time.ts';
import { compileRe2 } from './re2.ts';

export type BindValue = string | number | null;

export interface ValidParams {
  /** Values to bind, keyed by SQL parameter name (declared parameters, then RULE_BINDS). */
  bind: Record<string, BindValue>;
  /** Canonical declared values: the cache key part. */
  key: string;
}

/** Longest accepted value of a text parameter (project refs are 20 characters). */
export const MAX_TEXT_LENGTH = 256;

/**
 * Raw input: one value per parameter, from the query string or a JSON body (the HTTP edge,
 * server/request.ts, finds the repeated ones). Only own properties count: build it with
 * `rawParams()`, whose objects have no prototype.
 */
export type RawParams = Record<string, unknown>;

/** An empty parameter object without a prototype, so a `__proto__` key is just a key. */
export function rawParams(): RawParams {
  return Object.create(null) as RawParams;
}

function fieldSchema(spec: ParamSpec) {
  return z.unknown().transform((raw, ctx): BindValue => {
    const fail = (message: string, reason = 'invalid') => {
      ctx.addIssue({ code: 'custom', message, params: { reason } });
      return z.NEVER;
    };
    if (raw !== undefined && raw !== null && typeof raw !== 'string' && typeof raw !== 'number') {
      return fail(`${spec.name} must be a string`);
    }
    const value = raw === undefined || raw === null ? '' : String(raw);
    if (value === '') {
      if (spec.required) return fail(`${spec.name} is required`, 'required');
      return spec.default ?? null;
    }
    switch (spec.kind) {
      case 'text':
        if (value.length > MAX_TEXT_LENGTH) return fail(`${spec.name} is longer than ${MAX_TEXT_LENGTH} characters`);
        return value;
      case 'lenient-choice':
        return spec.allowed?.includes(value) ? value : (spec.fallback ?? value);
      case 'choice':
        if (!spec.allowed?.includes(value)) return fail(`${spec.name} must be one of ${spec.allowed?.join(', ')}`);
        return value;
      case 'iso-timestamp': {
        const read = readIsoMicros(value);
        if ('us' in read) return read.us;
        if (read.problem === 'out-of-range') return fail(`${spec.name} is outside the supported range ${INSTANT_RANGE.text}: ${value.slice(0, 64)}`);
        return fail(`${spec.name} is not an ISO 8601 timestamp: ${value.slice(0, 64)}`);
      }
      case 're2': {
        if (value.length > MAX_PATTERN_LENGTH) return fail(`${spec.name} is a pattern longer than ${MAX_PATTERN_LENGTH} characters`);
        try {
          compileRe2(value);
        } catch (err) {
          return fail(`${spec.name} is not a valid RE2 pattern: ${(err as Error).message}`);
        }
        return value;
      }
    }
  });
}

/** The SQL parameters the registry's rules bind as (queries/*.sql headers name them). */
export const RULE_BINDS = {
  /** The interval's window, µs back from now. */
  spanUs: 'span_us',
  /** The interval's bucket width, µs. */
  unitUs: 'unit_us',
  /** The tier's retention, µs. */
  retentionUs: 'retention_us',
  /** The endpoint's own row cut. */
  rows: 'rows',
  /** A status at least this is an error. */
  errorStatusAtLeast: 'error_status_at_least',
} as const;

/** The bind name of a declared parameter. */
function bindName(def: EndpointDefinition, param: string): string {
  const spec = def.params.find((p) => p.name === param);
  if (!spec) throw new Error(`${def.name}: its rules name the undeclared parameter ${param}`);
  return spec.bindAs ?? spec.name;
}

/**
 * The entry's rules as bind values for validated declared values: the window of the chosen
 * interval, the retention of the chosen tier (each a lenient choice's fallback for other
 * values), the row cut and the error rule.
 */
export function ruleBinds(def: EndpointDefinition, declared: Readonly<Record<string, BindValue>>): Record<string, BindValue> {
  const out: Record<string, BindValue> = {};
  if (def.intervals) {
    const { param, windows, fallback } = def.intervals;
    const chosen = String(declared[bindName(def, param)]);
    const w = windows[chosen] ?? (fallback !== undefined ? windows[fallback] : undefined);
    if (!w) throw new Error(`${def.name}: no window for ${param} ${chosen}`);
    out[RULE_BINDS.spanUs] = w.spanUs;
    out[RULE_BINDS.unitUs] = w.unitUs;
  }
  if (def.tiers) {
    const { param, tiers, fallback } = def.tiers;
    const t = tiers[String(declared[bindName(def, param)])] ?? tiers[fallback];
    if (!t) throw new Error(`${def.name}: no retention for the fallback tier ${fallback}`);
    out[RULE_BINDS.retentionUs] = t.retentionUs;
  }
  if (def.rows !== undefined) out[RULE_BINDS.rows] = def.rows;
  if (def.errorRule) out[RULE_BINDS.errorStatusAtLeast] = def.errorRule.statusAtLeast;
  for (const name of Object.keys(out)) {
    // A declared parameter of the same name would be silently overwritten.
    if (def.params.some((p) => (p.bindAs ?? p.name) === name)) throw new Error(`${def.name}: the parameter ${name} clashes with a rule's bind name`);
  }
  return out;
}

const schemas = new WeakMap<EndpointDefinition, z.ZodType<Record<string, BindValue>>>();

function schemaOf(def: EndpointDefinition) {
  let s = schemas.get(def);
  if (!s) {
    const shape: Record<string, ReturnType<typeof fieldSchema>> = {};
    for (const p of def.params) shape[p.name] = fieldSchema(p);
    s = z.object(shape) as unknown as z.ZodType<Record<string, BindValue>>;
    schemas.set(def, s);
  }
  return s;
}

/**
 * Validates the declared parameters (undeclared ones are ignored); throws a 400 naming each bad
 * one, with the `problems` the edge found (a parameter given twice), in the declared order.
 */
export function validateParams(def: EndpointDefinition, raw: RawParams, problems: readonly ErrorDetail[] = []): ValidParams {
  // Own properties only: a value inherited from a prototype was never sent.
  const declared = rawParams();
  for (const p of def.params) declared[p.name] = Object.hasOwn(raw, p.name) ? raw[p.name] : undefined;
  const result = schemaOf(def).safeParse(declared);
  const found: ErrorDetail[] = result.success
    ? []
    : result.error.issues.map((i) => ({
        reason: String((i as { params?: { reason?: string } }).params?.reason ?? 'invalid'),
        location: String(i.path[0] ?? ''),
        message: i.message,
      }));
  // A parameter the edge found at fault is named once, for that.
  const details = [...problems, ...found.filter((d) => !problems.some((p) => p.location === d.location))];
  if (details.length || !result.success) {
    const order = (d: ErrorDetail) => def.params.findIndex((p) => p.name === d.location);
    throw badParams(details.sort((a, b) => order(a) - order(b)));
  }
  checkTimeRanges(def, result.data);
  const bind: Record<string, BindValue> = {};
  const keyParts: Record<string, BindValue> = {};
  for (const p of def.params) {
    const v = result.data[p.name] ?? null;
    bind[p.bindAs ?? p.name] = v;
    keyParts[p.name] = v;
  }
  // The rules follow from the declared values, so the cache key needs only those.
  Object.assign(bind, ruleBinds(def, bind));
  return { bind, key: JSON.stringify(keyParts) };
}

/**
 * A range given backwards (`X_start` after `X_end`) is a mistake, not an empty answer. Equal
 * ends are allowed: logs.all's (start, end] is then simply empty.
 */
function checkTimeRanges(def: EndpointDefinition, values: Record<string, BindValue>): void {
  for (const p of def.params) {
    if (p.kind !== 'iso-timestamp' || !p.name.endsWith('_start')) continue;
    const endName = `${p.name.slice(0, -'_start'.length)}_end`;
    if (!def.params.some((q) => q.name === endName && q.kind === 'iso-timestamp')) continue;
    const start = values[p.name];
    const end = values[endName];
    if (typeof start === 'number' && typeof end === 'number' && start > end) {
      throw badParam(p.name, `${p.name} is after ${endName}`);
    }
  }
}
