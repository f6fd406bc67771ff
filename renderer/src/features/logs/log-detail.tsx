import type { ExplorerColumn, ExplorerFields } from '../../api/logs.ts';
import { CopyButton } from '../../ui/copy-button.tsx';
import { LevelBadge, StatusBadge } from './explorer-table.tsx';
import { JsonTree } from './json-tree.tsx';
import { formatDateTime, formatUtc, localZoneName } from '../../lib/time.ts';
import type { FieldFilter } from '../../../../contract/fields.ts';
import { relativeText } from '../../lib/time-display.ts';
import { useTimeMode } from '../../ui/time-mode.tsx';
import { fieldFilterActions } from './field-actions.tsx';

export interface DetailRecord {
  id: string;
  timestamp: number;
  event_message: string;
  metadata: unknown;
  fields: ExplorerFields;
}

const FIELD_ROWS: Array<[keyof ExplorerFields, string]> = [
  ['status', 'Status'],
  ['method', 'Method'],
  ['path', 'Path'],
  ['level', 'Level'],
  ['function_id', 'Function'],
];

/**
 * The table's columns while the detail panel is open beside it: the method is in the panel's
 * title, so its column goes to the path and the message, which a narrow table (a 1024 px
 * window) otherwise cut to a few characters.
 */
export function columnsBesideDetail<C extends ExplorerColumn>(columns: readonly C[], detailOpen: boolean): readonly C[] {
  return detailOpen ? columns.filter((c) => c !== 'method') : columns;
}

/**
 * Every field of one record: times, id, the source's fields, the message and the metadata tree;
 * with `onFieldFilter`, each scalar of the metadata offers to filter for it or exclude it.
 */
export function LogDetail({ record, onClose, onFieldFilter, now }: { record: DetailRecord; onClose: () => void; onFieldFilter?: (f: FieldFilter) => void; now?: number }) {
  const f = record.fields;
  const timeMode = useTimeMode();
  const json = { id: record.id, timestamp: record.timestamp, event_message: record.event_message, metadata: record.metadata };
  return (
    <aside className="log-detail fx-detail" data-testid="log-detail" aria-label="Selected record">
      <div className="log-detail__head">
        <div className="log-detail__title">
          {f.status !== undefined && <StatusBadge status={f.status} />}
          {f.level !== undefined && <LevelBadge level={f.level} />}
          {f.method !== undefined && <span className="mono method">{f.method ?? '—'}</span>}
          {f.path !== undefined ? (
            <span className="mono ellipsis" title={f.path ?? undefined}>
              {f.path ?? '—'}
            </span>
          ) : (
            <span className="mono ellipsis" title={record.event_message.slice(0, 2000)}>
              {record.event_message.slice(0, 200)}
            </span>
          )}
        </div>
        <button type="button" className="icon-btn" aria-label="Close details" title="Close (Esc)" onClick={onClose} data-testid="detail-close">
          ×
        </button>
      </div>
      <div className="log-detail__body">
        <dl className="kv">
          <dt>Time</dt>
          <dd className="mono">
            {formatDateTime(record.timestamp, 'us')} <span className="muted">{localZoneName()}</span>
          </dd>
          <dt>UTC</dt>
          <dd className="mono">{formatUtc(record.timestamp, 'us')}</dd>
          {timeMode === 'relative' && now !== undefined && (
            <>
              <dt>Age</dt>
              <dd data-testid="detail-age">{relativeText(record.timestamp, now)}</dd>
            </>
          )}
          <dt>Timestamp</dt>
          <dd className="mono" data-testid="detail-us">
            {record.timestamp} µs
          </dd>
          <dt>ID</dt>
          <dd className="mono" data-testid="detail-id">
            {record.id}
          </dd>
          {FIELD_ROWS.filter(([k]) => f[k] !== undefined).map(([k, label]) => (
            <FieldRow key={k} label={label} value={f[k]} testId={`detail-${k}`} />
          ))}
        </dl>
        <div className="log-detail__section">
          <div className="log-detail__section-head">
            <h3>Event message</h3>
            <CopyButton text={record.event_message} label="Copy message" testId="copy-message" />
          </div>
          <pre className="code-block" data-testid="detail-message">
            {record.event_message}
          </pre>
        </div>
        <div className="log-detail__section">
          <div className="log-detail__section-head">
            <h3>Metadata</h3>
            <CopyButton text={() => JSON.stringify(json, null, 2)} label="Copy record JSON" testId="copy-record" />
          </div>
          <JsonTree value={record.metadata} openDepth={5} actions={onFieldFilter ? fieldFilterActions(record.metadata, onFieldFilter) : undefined} />
        </div>
      </div>
    </aside>
  );
}

function FieldRow({ label, value, testId }: { label: string; value: string | number | null | undefined; testId: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd className="mono" data-testid={testId}>
        {value ?? '—'}
      </dd>
    </>
  );
}
