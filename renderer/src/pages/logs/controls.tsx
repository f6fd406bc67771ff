/** Controls both Logs views share: the view tabs, the time range and its custom form. */
import { useEffect, useState, type ReactNode } from 'react';
import { useView } from '../../app-state.tsx';
import { Field } from '../../components/field.tsx';
import { Segmented } from '../../components/segmented.tsx';
import { RANGE_PRESETS, resolveRange } from '../../lib/logs.ts';
import { fromLocalInputValue, toLocalInputValue } from '../../lib/time.ts';
import { logsMode, type LogsMode } from '../../lib/url-state.ts';
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

/** The range presets plus "Custom", which starts from what is on screen so nothing jumps. */
export function RangeControls({ now }: { now: number | undefined }) {
  const { view, update } = useView();
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
    </>
  );
}

export function CustomRange({ start, end, onApply }: { start?: number; end?: number; onApply: (start: number | undefined, end: number | undefined) => void }) {
  const [draftStart, setDraftStart] = useState(start === undefined ? '' : toLocalInputValue(start));
  const [draftEnd, setDraftEnd] = useState(end === undefined ? '' : toLocalInputValue(end));
  useEffect(() => setDraftStart(start === undefined ? '' : toLocalInputValue(start)), [start]);
  useEffect(() => setDraftEnd(end === undefined ? '' : toLocalInputValue(end)), [end]);
  const s = draftStart ? fromLocalInputValue(draftStart) : undefined;
  const e = draftEnd ? fromLocalInputValue(draftEnd) : undefined;
  const invalid = s !== undefined && e !== undefined && s >= e;
  // An unchanged field keeps its microseconds.
  const sameStart = start !== undefined && draftStart === toLocalInputValue(start);
  const sameEnd = end !== undefined && draftEnd === toLocalInputValue(end);
  return (
    <form
      className="custom-range"
      onSubmit={(ev) => {
        ev.preventDefault();
        if (!invalid) onApply(sameStart ? start : s, sameEnd ? end : e);
      }}
    >
      <Field label="After (local)" htmlFor="range-start">
        <input id="range-start" className="input input--time" type="datetime-local" step={1} value={draftStart} onChange={(ev) => setDraftStart(ev.target.value)} data-testid="range-start" />
      </Field>
      <Field label="Until (local, inclusive)" htmlFor="range-end">
        <input id="range-end" className="input input--time" type="datetime-local" step={1} value={draftEnd} onChange={(ev) => setDraftEnd(ev.target.value)} data-testid="range-end" />
      </Field>
      <button type="submit" className="btn btn--small btn--primary" disabled={invalid} data-testid="range-apply">
        Apply
      </button>
      {invalid && <span className="field-error">Start must be before end</span>}
    </form>
  );
}
