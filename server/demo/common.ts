/** Pieces shared by the per-source record builders. */
import type { JsonObject } from '../store/shape.ts';
import { DEMO_PROJECTS, type DemoProject } from './projects.ts';
import { Weighted, type Rng } from './random.ts';

/** One generated log record (see generate.ts for the contract). */
export interface DemoRecord {
  id: string;
  /** Integer microseconds since the epoch, UTC. */
  timestamp: number;
  event_message: string;
  /** Ingest shape (nested objects). Generated records are deeply frozen and share sub-objects. */
  metadata: JsonObject;
  /** Only for sources whose project lives on the record (`{ in: 'record' }` in sources.ts). */
  project?: string;
}

/** Builds the record for one timestamp; called in timestamp order, newest first. */
export type RecordMaker = (timestamp: number) => DemoRecord;

/**
 * A record that also carries the JSON text of its event message and of its metadata (exactly
 * what JSON.stringify gives), in private fields: invisible to JSON.stringify, spread,
 * structuredClone and equality checks. The edge builder uses it because stringifying ~1.7 KB
 * per record would otherwise dominate exporting a million records. The record and its
 * metadata are frozen, so the text cannot go stale; a copy is a plain object without it.
 */
export class PreSerializedRecord implements DemoRecord {
  readonly id: string;
  readonly timestamp: number;
  readonly event_message: string;
  readonly project: string;
  readonly metadata: JsonObject;
  readonly #eventMessageJson: string;
  readonly #metadataJson: string;

  constructor(
    id: string,
    timestamp: number,
    eventMessage: string,
    project: string,
    metadata: JsonObject,
    json: { eventMessage: string; metadata: string },
  ) {
    this.id = id;
    this.timestamp = timestamp;
    this.event_message = eventMessage;
    this.project = project;
    this.metadata = metadata;
    this.#eventMessageJson = json.eventMessage;
    this.#metadataJson = json.metadata;
    Object.freeze(this);
  }

  /** The JSON text of `event_message` and `metadata`, if `record` carries it. */
  static jsonOf(record: DemoRecord): { eventMessage: string; metadata: string } | undefined {
    return #eventMessageJson in record ? { eventMessage: record.#eventMessageJson, metadata: record.#metadataJson } : undefined;
  }

  /** Just the metadata text (no allocation), if `record` carries it. */
  static metadataJsonOf(record: DemoRecord): string | undefined {
    return #metadataJson in record ? record.#metadataJson : undefined;
  }

  /** Just the event message text (no allocation), if `record` carries it. */
  static eventMessageJsonOf(record: DemoRecord): string | undefined {
    return #eventMessageJson in record ? record.#eventMessageJson : undefined;
  }
}

/** Projects weighted by their traffic share. */
export function projectPicker(): Weighted<DemoProject> {
  return new Weighted(DEMO_PROJECTS.map((p) => [p, p.traffic] as const));
}

const pad2 = (n: number) => (n < 10 ? '0' : '') + n;

/**
 * `Thu, 23 Mar 2023 12:59:07 GMT` for an HTTP Date header. Date formatting is slow next to
 * everything else a record needs, so the day part is cached and the time is plain arithmetic.
 */
export function httpDateFormatter(): (us: number) => string {
  let lastDay = Number.NaN;
  let dayText = '';
  return (us) => {
    const s = Math.floor(us / 1_000_000);
    const day = Math.floor(s / 86_400);
    if (day !== lastDay) {
      lastDay = day;
      dayText = new Date(day * 86_400_000).toUTCString().slice(0, 17); // "Thu, 23 Mar 2023 "
    }
    const r = s - day * 86_400;
    return `${dayText}${pad2(Math.floor(r / 3600))}:${pad2(Math.floor(r / 60) % 60)}:${pad2(r % 60)} GMT`;
  };
}

/** `2026-11-22T10:00:00Z` (whole seconds, as GoTrue writes `time`). */
export function isoSeconds(us: number): string {
  return new Date(Math.floor(us / 1000)).toISOString().slice(0, 19) + 'Z';
}

/** `2026-11-22 10:00:00.123 UTC` (Postgres' log_line_prefix timestamp, milliseconds). */
export function pgTimestamp(us: number): string {
  const iso = new Date(Math.floor(us / 1000)).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)} UTC`;
}

/** `2026-11-22 10:00:00 UTC` (Postgres' session start time, seconds). */
export function pgSeconds(us: number): string {
  const iso = new Date(Math.floor(us / 1000)).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** `2026-11-22T10:00:00.123456789+00:00`: the µs instant plus three nanosecond digits. */
export function isoNanosUtc(us: number, nanos: number): string {
  const ms = Math.floor(us / 1000);
  const iso = new Date(ms).toISOString();
  const micros = us - ms * 1000;
  return `${iso.slice(0, 23)}${String(micros).padStart(3, '0')}${String(nanos).padStart(3, '0')}+00:00`;
}

/** `0:00:12.345` (Postgres' session time in disconnection lines). */
export function pgDuration(ms: number): string {
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = (ms % 60_000) / 1000;
  return `${h}:${pad2(m)}:${s < 10 ? '0' : ''}${s.toFixed(3)}`;
}

/** A project's anon key, as clients put it in `?apikey=` (a JWT; the signature is made up). */
export function anonKey(project: DemoProject, rng: Rng): string {
  const header = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url');
  const payload = Buffer.from(
    JSON.stringify({ iss: 'supabase', ref: project.ref, role: 'anon', iat: 1715000000, exp: 2030576000 }),
  ).toString('base64url');
  return `${header}.${payload}.${rng.chars(43, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_')}`;
}

/** Picks an HTTP status class with the overall mix 85% 2xx, 3% 3xx, 9% 4xx, 3% 5xx. */
export const STATUS_CLASS = new Weighted<2 | 3 | 4 | 5>([
  [2, 85],
  [3, 3],
  [4, 9],
  [5, 3],
]);
