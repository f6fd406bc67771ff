/** Controls both Logs views share: the view tabs, the time range and its custom form, and how fresh the data is. */
import { useEffect, useState, type ReactNode } from 'react';
import { useLogFields } from '../../api/logs.ts';
import { useView } from '../../app-state.tsx';
import { Field } from '../../ui/field.tsx';
import { Freshness } from '../../ui/freshness.tsx';
import { Segmented } from '../../ui/segmented.tsx';
import { RANGE_PRESETS, resolveRange } from '../../lib/logs-range.ts';
import { formatWallTime, parseWallTime } from '../../lib/time.ts';
import { logsMode, type LogsMode } from '../../lib/url-state.ts';
import { EDGE_SOURCE } from '../../lib/source-projects.ts';
import { resolveSource } from './explorer/explorer-state.ts';
import { RANGE_LABELS } from './range-labels.ts';

const MODE_LABELS: Record<LogsMode, string> = {
  explore: 'Explorer',
  exact: 'Exact logs.all view',
};

/** Which view the page is in, and the switch to the other. */
export function ModeTabs() {
  const { view, update } = useView();
  const mode = logsMode(view.logs);
  return (
    <div className="ex-tabs" role="tablist" aria-label="Logs view" data-testid="logs-mode">
      {(['explore', 'exact'] as const).map((m) => (
        <button
          key={m}
          type="button"
          role="tab"
          aria-selected={mode === m}
          className={`ex-tab${mode === m ? ' is-active' : ''}`}
          onClick={() => mode !== m && update((v) => ({ ...v, logs: { ...v.logs, mode: m } }))}
          data-testid={`mode-${m}`}
        >
          {MODE_LABELS[m]}
        </button>
      ))}
    </div>
  );
}

/** The page's title row: "Logs", the view tabs, and the view's actions; then one line saying what the view is. */
export function LogsHeader({ actions, description }: { actions: ReactNode; description: ReactNode }) {
  return (
    <>
      <header className="page-header ex-header">
        <div className="ex-header__text">
          <h1>Logs</h1>
          <ModeTabs />
        </div>
        <div className="page-header__actions">{actions}</div>
      </header>
      <p className="ex-header__desc muted" data-testid="logs-view-description">
        {description}
      </p>
    </>
  );
}

/**
 * The range presets plus "Custom", which starts from what is on screen so nothing jumps; then
 * how fresh the view's source is (the explorer's source, edge requests in the exact view).
 */
export function RangeControls({ now }: { now: number | undefined }) {
  const { view, update } = useView();
  const fields = useLogFields();
  const source = logsMode(view.logs) === 'exact' ? EDGE_SOURCE : resolveSource(fields.data ?? [], view.logs.source)?.source;
  return (
    <>
      <Field label="Time range">
        <Segmented
          label="Time range"
          testId="range"
          options={[...RANGE_PRESETS, 'custom'] as const}
          labels={RANGE_LABELS}
          value={view.logs.range}
          onChange={(r) =>
            update((v) => {
              const { start: _s, end: _e, ...rest } = v.logs;
              if (r !== 'custom') return { ...v, logs: { ...rest, range: r } };
              const cur = now === undefined ? {} : resolveRange(v.logs.range, now, { start: v.logs.start, end: v.logs.end });
              return { ...v, logs: { ...rest, range: 'custom', start: cur.start, end: cur.end } };
            })
          }
        />
      </Field>
      {view.logs.range === 'custom' && (
        <CustomRange
          start={view.logs.start}
          end={view.logs.end}
          onApply={(start, end) => update((v) => ({ ...v, logs: { ...v.logs, range: 'custom', start, end } }))}
        />
      )}
      <Freshness source={source} project={view.project} />
    </>
  );
}

/**
 * The custom range as a person reads it: "from" the first instant in it, "to" the first after it,
 * 24-hour local time. The API's range is (start, end], so from = start + 1 µs and to = end + 1 µs:
 * a bucket's range reads 15:40:00 – 15:41:00, not 15:39:59.999999 – 15:40:59.999999.
 */
export function CustomRange({ start, end, onApply }: { start?: number; end?: number; onApply: (start: number | undefined, end: number | undefined) => void }) {
  const shown = (us: number | undefined) => (us === undefined ? '' : formatWallTime(us + 1));
  const [draftStart, setDraftStart] = useState(shown(start));
  const [draftEnd, setDraftEnd] = useState(shown(end));
  useEffect(() => setDraftStart(shown(start)), [start]);
  useEffect(() => setDraftEnd(shown(end)), [end]);
  const from = draftStart ? parseWallTime(draftStart) : undefined;
  const to = draftEnd ? parseWallTime(draftEnd) : undefined;
  const badStart = draftStart !== '' && from === undefined;
  const badEnd = draftEnd !== '' && to === undefined;
  const invalid = badStart || badEnd || (from !== undefined && to !== undefined && from >= to);
  // An unchanged field keeps its microseconds.
  const sameStart = start !== undefined && draftStart === shown(start);
  const sameEnd = end !== undefined && draftEnd === shown(end);
  const placeholder = 'YYYY-MM-DD HH:MM:SS';
  return (
    <form
      className="custom-range"
      onSubmit={(ev) => {
        ev.preventDefault();
        if (!invalid) onApply(sameStart ? start : from === undefined ? undefined : from - 1, sameEnd ? end : to === undefined ? undefined : to - 1);
      }}
    >
      <Field label="From (local, 24 h)" htmlFor="range-start">
        <input id="range-start" className="input input--time input--mono" type="text" inputMode="numeric" spellCheck={false} placeholder={placeholder} aria-invalid={badStart} value={draftStart} onChange={(ev) => setDraftStart(ev.target.value)} data-testid="range-start" />
      </Field>
      <Field label="To (local, exclusive)" htmlFor="range-end">
        <input id="range-end" className="input input--time input--mono" type="text" inputMode="numeric" spellCheck={false} placeholder={placeholder} aria-invalid={badEnd} value={draftEnd} onChange={(ev) => setDraftEnd(ev.target.value)} data-testid="range-end" />
      </Field>
      <button type="submit" className="btn btn--small btn--primary" disabled={invalid} data-testid="range-apply">
        Apply
      </button>
      {badStart || badEnd ? <span className="field-error">Write times as {placeholder} (24-hour)</span> : invalid && <span className="field-error">From must be before to</span>}
    </form>
  );
}
