/**
 * What the sync UI says, as pure functions: ages and countdowns in words,
 * a backfill's progress, a project ref read from what a user pastes, each problem of a sync in
 * plain words with what to do, and how fresh a page's source is.
 */
import type { ConnectionView, SourceListing, SourceSyncView, SyncErrorKind } from '../../../contract/api-types.ts';
import { MICROS } from '../../../contract/instants.ts';

/** An age in words, for "synced … ago": `0 s`, `40 s`, `5 min`, `3 h`, `2 days`. */
export function formatAge(us: number): string {
  const s = Math.max(0, Math.floor(us / MICROS.second));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h`;
  return `${Math.floor(h / 24)} days`;
}

/** A wait in words, rounded up so it never says 0 while waiting: `42 s`, `1 min 05 s`, `5 min 00 s`. */
export function formatCountdown(us: number): string {
  const s = Math.max(0, Math.ceil(us / MICROS.second));
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** A length of time in words, for "3.5 days of 7 days": `45 s`, `12 min`, `5.5 h`, `3.5 days`. */
export function formatDuration(us: number): string {
  const a = Math.max(0, us);
  if (a >= 2 * MICROS.day) return `${trim(a / MICROS.day)} days`;
  if (a >= 2 * MICROS.hour) return `${trim(a / MICROS.hour)} h`;
  if (a >= MICROS.minute) return `${Math.round(a / MICROS.minute)} min`;
  return `${Math.round(a / MICROS.second)} s`;
}

function trim(n: number): string {
  return n.toFixed(1).replace(/\.0$/, '');
}

export interface Progress {
  /** 0..1 */
  ratio: number;
  /** Time covered since the history start, and the time from it to now (µs). */
  covered: number;
  total: number;
}

/** A backfill's progress: the time synced since the history start, of the time from it to now. */
export function backfillProgress(start: number, through: number | null, now: number): Progress {
  const total = Math.max(0, now - start);
  const covered = through === null ? 0 : Math.min(total, Math.max(0, through - start));
  return { ratio: total === 0 ? 1 : covered / total, covered, total };
}

const REF_RE = /^[a-z]{20}$/;

/**
 * The project ref in what a user pastes: the ref itself, `https://<ref>.supabase.co`, or a
 * dashboard address (`https://supabase.com/dashboard/project/<ref>/...`). Null when none is there.
 */
export function parseProjectRef(text: string): string | null {
  const t = text.trim();
  if (REF_RE.test(t)) return t;
  const host = /^(?:https?:\/\/)?([a-z]{20})\.supabase\.(?:co|in)(?:[:/?#]|$)/i.exec(t);
  if (host && REF_RE.test(host[1]!)) return host[1]!;
  const dash = /\/project\/([a-z]{20})(?:[/?#]|$)/.exec(t);
  if (dash) return dash[1]!;
  return null;
}

/** What the card says about a problem: a title, what it means and what to do, and the fix it offers. */
export interface ProblemWords {
  title: string;
  advice: string;
  /** `token`: offer a field for a new token. */
  action: 'token' | null;
  /** The sync tries again by itself (a countdown is shown). */
  retries: boolean;
}

/** Where a Supabase personal access token is created. */
export const SUPABASE_TOKENS_URL = 'https://supabase.com/dashboard/account/tokens';

/** A sync's problem in plain words, with what to do about it. */
export function problemWords(kind: SyncErrorKind, status: number | null, conn: Pick<ConnectionView, 'kind' | 'ref'>): ProblemWords {
  const supabase = conn.kind === 'supabase';
  const remote = supabase ? 'Supabase' : 'The Logflare server';
  switch (kind) {
    case 'auth':
      if (status === 403) {
        return {
          title: supabase ? `The token cannot read project ${conn.ref}` : 'The Logflare server refused access',
          advice: supabase
            ? `${remote} answered 403: the account this token belongs to cannot read this project, or no project has this ref. Check the project ref, or paste here a token of an account that is a member of the project.`
            : `${remote} answered 403: this token may not read project ${conn.ref}. Check the project name, or paste here a token that may read it.`,
          action: 'token',
          retries: false,
        };
      }
      return {
        title: 'The token was refused',
        advice: supabase
          ? `${remote} answered ${status ?? 401}: the token is wrong, expired or revoked. Create a new personal access token (Account → Access Tokens) and paste it here; the sync goes on from where it stopped.`
          : `${remote} answered ${status ?? 401}: the access token is wrong or was revoked. Create a new access token on that server and paste it here; the sync goes on from where it stopped.`,
        action: 'token',
        retries: false,
      };
    case 'token':
      return {
        title: 'The saved token cannot be used here',
        advice: 'Paste the token again to go on; nothing synced is lost.',
        action: 'token',
        retries: false,
      };
    case 'refused':
      if (status === null) {
        return {
          title: 'The sync stopped at a page it cannot go on from',
          advice: 'Resume to try again; the records synced so far are kept.',
          action: null,
          retries: false,
        };
      }
      if (status === 404) {
        return { title: 'Nothing answers at this address', advice: `${remote} answered 404: check the URL of the connection (remove it and connect again with the right one).`, action: null, retries: false };
      }
      if (status >= 300 && status < 400) {
        return { title: 'The remote redirected elsewhere', advice: 'The token is sent only to the address you gave, so redirects are not followed: remove the connection and connect again with the address the remote answers at.', action: null, retries: false };
      }
      return {
        title: 'The project refused the query',
        advice: supabase
          ? `${remote} answered ${status}. If the project keeps its logs in the other engine, connect it again with that dialect (ClickHouse for projects created since June 2026, BigQuery before) or with Detect; if this project has no such source, untick it. Resume tries again.`
          : `${remote} answered ${status}. Check the project name; Resume tries again.`,
        action: null,
        retries: false,
      };
    case 'rate_limited':
      return {
        title: 'Rate limited by the remote',
        advice: supabase
          ? 'Supabase allows 60 calls a minute per account, across all your tokens and tools, and then refuses every call for a minute. The sync waits and goes on by itself; nothing is lost.'
          : 'The server refused calls for a while. The sync waits and goes on by itself; nothing is lost.',
        action: null,
        retries: true,
      };
    case 'remote':
      return status === null
        ? { title: 'Cannot reach the remote', advice: 'Check the network connection and the URL. The sync tries again by itself, waiting longer each time (at most 5 minutes); nothing is lost.', action: null, retries: true }
        : { title: `${remote} is having trouble (${status})`, advice: 'The sync tries again by itself, waiting longer each time (at most 5 minutes); nothing is lost.', action: null, retries: true };
    case 'store':
      return { title: 'The synced records could not be stored', advice: 'Usually a full disk: free some space. The sync tries again by itself; nothing synced before is lost.', action: null, retries: true };
  }
}

export type Freshness =
  | { kind: 'synced'; connection: ConnectionView; source: SourceSyncView }
  | { kind: 'imported'; newest: number }
  | null;

/**
 * How fresh a page's data is: the connection syncing `source` for `project` (any project when
 * null) whose last commit is newest, else the newest stored record of the source, else null.
 */
export function freshnessOf(connections: readonly ConnectionView[] | undefined, listing: readonly SourceListing[] | undefined, source: string, project: string | null): Freshness {
  let best: { connection: ConnectionView; source: SourceSyncView } | null = null;
  const key = (s: SourceSyncView) => s.syncedAt ?? s.through ?? -Infinity;
  for (const c of connections ?? []) {
    const s = c.sources[source];
    if (!s || (project && c.ref !== project)) continue;
    if (!best || key(s) > key(best.source)) best = { connection: c, source: s };
  }
  if (best) return { kind: 'synced', ...best };
  const newest = listing?.find((s) => s.source === source || s.alias === source)?.maxTimestamp ?? null;
  return newest === null ? null : { kind: 'imported', newest };
}

/** The connections that sync a source's records of a project (the Data page labels those records). */
export function syncingConnections(connections: readonly ConnectionView[] | undefined, source: string, project: string): ConnectionView[] {
  return (connections ?? []).filter((c) => c.ref === project && c.sources[source] !== undefined);
}

/** `Supabase` / `Logflare (logs.example.com)`: a connection's remote, short. */
export function remoteLabel(c: Pick<ConnectionView, 'kind' | 'url'>): string {
  let host = c.url;
  try {
    host = new URL(c.url).host;
  } catch {
    // keep the text
  }
  if (c.kind === 'supabase') return host === 'api.supabase.com' ? 'Supabase' : `Supabase API at ${host}`;
  return `Logflare at ${host}`;
}
