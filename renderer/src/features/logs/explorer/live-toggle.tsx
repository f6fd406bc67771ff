/**
 * The explorer's Live mode. While on, the first page of the current search
 * is asked again every few seconds over the range moved to the server's now (the API has no
 * change signal; `/api/logs` answers newest first). Records the table does not hold yet (from
 * a sync's poll or an import) then appear at the top: at once when the table is scrolled to its
 * top, else behind an "N new" pill over the table that brings them in. Live pauses while a row is
 * selected, so what is being read never moves.
 *
 * Bringing records in moves the window as Refresh would (the clock query takes the fresh
 * clock) and hands the explorer its first page already fetched, so the table does not reload.
 * Live follows the relative ranges (Last 15 min … 7 days); a custom range stays where it is.
 */
import { useQueryClient, type InfiniteData } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import type { ClockView } from '../../../../../contract/api-types.ts';
import { api } from '../../../api/client.ts';
import { useClock } from '../../../api/hooks.ts';
import { EXPLORER_PAGE_SIZE, getLogsJson, type ExplorerPage, type LogsParams } from '../../../api/logs.ts';
import { useView } from '../../../app-state.tsx';
import { ROW_HEIGHT } from '../explorer-table.tsx';
import { formatInt } from '../../../lib/format.ts';
import { PRESET_SPAN } from '../../../lib/logs-range.ts';
import { formatIsoMicros } from '../../../../../contract/instants.ts';
import { formatDateTime } from '../../../lib/time.ts';

/** How often Live asks for the first page again. */
export const LIVE_POLL_MS = 3_000;

/** A poll's answer that is not on screen yet. */
interface Arrival {
  clock: ClockView;
  params: LogsParams;
  page: ExplorerPage;
  /** Records in it the table does not hold. */
  count: number;
  /** The page was all new and more follow it: "200+ new". */
  more: boolean;
}

/** The explorer table's scrolling body (explorer-table.tsx) and the results box around it. */
const grid = () => document.querySelector<HTMLElement>('[data-testid="logs-grid"]');
const resultsBox = () => document.querySelector<HTMLElement>('.ex-results');
const atTop = () => (grid()?.scrollTop ?? 0) < ROW_HEIGHT / 2;

const logsKey = (params: LogsParams) => ['endpoint', 'logs.explorer', params] as const;

export function LiveToggle({ params, paused, onResume }: { params: LogsParams | null; paused: boolean; onResume: () => void }) {
  const qc = useQueryClient();
  const { view } = useView();
  const clock = useClock();
  const preset = view.logs.range;
  const usable = preset !== 'custom';
  const [on, setOn] = useState(false);
  const [arrival, setArrival] = useState<Arrival | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  // The first poll after Live is turned on goes at once; after that, one every LIVE_POLL_MS.
  const soon = useRef(false);
  const paramsKey = JSON.stringify(params);

  /** Shows an arrival: the explorer's next first page, then the moved window. */
  const bringIn = useCallback(
    (a: Arrival) => {
      qc.setQueryData<InfiniteData<ExplorerPage, string | null>>(logsKey(a.params), { pages: [a.page], pageParams: [null] });
      if (params && JSON.stringify(a.params) === JSON.stringify(params)) {
        // The window did not move (a fixed clock): the counts are asked again for the same one.
        void qc.invalidateQueries({ queryKey: ['endpoint', 'logs.histogram'] });
        void qc.invalidateQueries({ queryKey: ['endpoint', 'logs.facets'] });
      }
      qc.setQueryData(['clock'], a.clock);
      void qc.invalidateQueries({ queryKey: ['sources'] });
      setArrival(null);
    },
    [qc, params],
  );

  useEffect(() => {
    if (!on || paused || !params || !usable) return;
    const ctl = new AbortController();
    let timer: number | undefined;
    const poll = async () => {
      try {
        const fresh = await api<ClockView>('clock', { signal: ctl.signal });
        const next = { ...params, start: formatIsoMicros(fresh.now - PRESET_SPAN[preset]), end: formatIsoMicros(fresh.now) };
        const page = await getLogsJson<ExplorerPage>('', { ...next, limit: String(EXPLORER_PAGE_SIZE) }, ctl.signal);
        const shown = qc.getQueryData<InfiniteData<ExplorerPage>>(logsKey(params));
        setProblem(null);
        if (shown) {
          const held = new Set<string>();
          for (const p of shown.pages) for (const r of p.result) held.add(r.id);
          const count = page.result.reduce((n, r) => n + (held.has(r.id) ? 0 : 1), 0);
          if (count === 0) setArrival(null);
          else {
            const a: Arrival = { clock: fresh, params: next, page, count, more: count === page.result.length && page.next !== null };
            if (atTop() && !pausedRef.current) bringIn(a);
            else setArrival(a);
          }
        }
      } catch (err) {
        if (ctl.signal.aborted) return;
        setProblem((err as Error).message);
      }
      if (!ctl.signal.aborted) timer = window.setTimeout(() => void poll(), LIVE_POLL_MS);
    };
    timer = window.setTimeout(() => void poll(), soon.current ? 0 : LIVE_POLL_MS);
    soon.current = false;
    return () => {
      ctl.abort();
      window.clearTimeout(timer);
    };
    // paramsKey stands for params (a new object each render of the same search).
  }, [on, paused, paramsKey, usable, preset, qc, bringIn]);

  // Scrolling back to the top brings waiting records in, as the pill does.
  useEffect(() => {
    const el = grid();
    if (!arrival || paused || !el) return;
    const onScroll = () => {
      if (atTop()) bringIn(arrival);
    };
    el.addEventListener('scroll', onScroll, { passive: true });
    return () => el.removeEventListener('scroll', onScroll);
  }, [arrival, paused, bringIn]);

  // A new search drops what was waiting for the old one.
  useEffect(() => setArrival(null), [paramsKey]);

  const toggle = () => {
    soon.current = !on;
    setOn(!on);
    setArrival(null);
    setProblem(null);
  };

  const box = arrival && !paused ? resultsBox() : null;
  const fixed = clock.data?.mode === 'fixed' ? clock.data : null;
  return (
    <>
      <span className="live" data-testid="live">
        <button
          type="button"
          className={`btn btn--small live__toggle${on && usable ? ' is-on' : ''}`}
          aria-pressed={on}
          disabled={!usable}
          title={usable ? (on ? 'Stop following new records' : 'Show new records at the top as they arrive') : 'Live follows a relative range (Last 15 min … 7 days); pick one to go live'}
          onClick={toggle}
          data-testid="live-toggle"
        >
          <span className="live__dot" aria-hidden="true" />
          Live
        </button>
        {on && usable && paused && (
          <span className="small muted live__status" data-testid="live-status" data-state="paused">
            Paused while a row is selected ·{' '}
            <button type="button" className="link-btn" onClick={onResume} data-testid="live-resume">
              resume
            </button>
          </span>
        )}
        {on && usable && !paused && problem && (
          <span className="small text-error live__status" data-testid="live-status" data-state="error" title={problem}>
            Cannot check for new records
          </span>
        )}
        {on && usable && !paused && !problem && fixed && (
          <span className="small muted live__status" data-testid="live-status" data-state="fixed" title="Settings → Clock: real time moves the window with the present">
            The clock is fixed at {formatDateTime(fixed.now, 'second')}
          </span>
        )}
      </span>
      {box &&
        arrival &&
        createPortal(
          <button
            type="button"
            className="live-pill"
            onClick={() => {
              grid()?.scrollTo({ top: 0 });
              bringIn(arrival);
            }}
            data-testid="live-new"
            data-count={arrival.count}
          >
            ↑ {formatInt(arrival.count)}
            {arrival.more ? '+' : ''} new
          </button>,
          box,
        )}
    </>
  );
}
