/**
 * How fresh a page's data is, shown beside its time range: "Synced 40 s
 * ago" when a connection syncs the page's source for its project, else the time of the newest
 * stored record ("Newest record …" for imported data). A sync that is not well says so (paused,
 * waiting, failed) and links to its card on the Data page.
 */
import type { ReactNode } from 'react';
import { useConnections, syncNow } from '../api/connections.ts';
import { useSources } from '../api/hooks.ts';
import { useView } from '../app-state.tsx';
import { formatInt } from '../lib/format.ts';
import { formatAge, formatCountdown, freshnessOf, remoteLabel } from '../lib/sync.ts';
import { formatUtc } from '../lib/time.ts';
import { useTick } from '../lib/use-tick.ts';
import { TimeText } from './time-text.tsx';

/** How often pages ask how their connections stand (the Data page asks more often). */
const POLL_MS = 5_000;

type Tone = 'ok' | 'busy' | 'warn' | 'error' | 'idle';

export function Freshness({ source, project }: { source: string | undefined; project: string | null }) {
  const connections = useConnections(POLL_MS);
  const sources = useSources();
  const perf = useTick(1_000);
  const { navigate } = useView();
  if (!source) return null;
  const f = freshnessOf(connections.data?.result, sources.data, source, project);
  if (!f) return null;

  if (f.kind === 'imported') {
    return (
      <span className="freshness" data-testid="freshness" data-kind="imported" title="The newest record stored for this source (imported data)">
        <span className="freshness__dot freshness__dot--idle" aria-hidden="true" />
        Newest record <TimeText us={f.newest} />
      </span>
    );
  }

  const { connection: c, source: s } = f;
  const now = syncNow(connections.data!, c, perf);
  const ago = s.syncedAt === null ? null : formatAge(now - s.syncedAt);
  const through = s.through === null ? null : <TimeText us={s.through} precision="minute" />;
  let tone: Tone;
  let text: ReactNode;
  switch (s.state) {
    case 'failed':
      tone = 'error';
      text = <>Sync failed{through && <> · synced through {through}</>}</>;
      break;
    case 'paused':
      tone = 'idle';
      text = <>Sync paused{ago ? ` · synced ${ago} ago` : through ? <> · synced through {through}</> : ''}</>;
      break;
    case 'waiting':
      tone = 'warn';
      text = (
        <>
          {ago ? `Synced ${ago} ago` : 'Sync waiting'}
          {s.waitUntil !== null && ` · next try in ${formatCountdown(s.waitUntil - now)}`}
        </>
      );
      break;
    case 'backfilling':
      tone = 'busy';
      text = <>Backfilling{through ? <> · through {through}</> : '…'}</>;
      break;
    default:
      tone = 'ok';
      text = ago ? `Synced ${ago} ago` : through ? <>Synced through {through}</> : 'Synced';
  }
  const title = [
    `${remoteLabel(c)} · project ${c.ref}`,
    `${formatInt(s.records)} records synced`,
    s.syncedAt !== null ? `last page stored ${formatUtc(s.syncedAt)}` : null,
    s.through !== null ? `everything before ${formatUtc(s.through)} is synced` : null,
    s.error ? `the remote said: ${s.error}` : null,
  ]
    .filter(Boolean)
    .join('\n');
  return (
    <span className={`freshness freshness--${tone}`} data-testid="freshness" data-kind="synced" data-state={s.state} title={title}>
      <span className={`freshness__dot freshness__dot--${tone}`} aria-hidden="true" />
      {text}
      {(tone === 'error' || tone === 'warn') && (
        <button type="button" className="link-btn" onClick={() => navigate('data')} data-testid="freshness-details">
          details
        </button>
      )}
    </span>
  );
}
