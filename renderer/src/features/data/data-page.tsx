import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useMemo, useRef, useState, type DragEvent } from 'react';
import type { ImportErrorEntry, ImportReport, SourceListing } from '../../../../contract/api-types.ts';
import { getBridge, refreshAll } from '../../api/bridge.ts';
import { ApiError, uploadImport } from '../../api/client.ts';
import { useConnections } from '../../api/connections.ts';
import { invalidateData, useSources } from '../../api/hooks.ts';
import { useDeleteSource, useImports, useLoadDemo } from './data-api.ts';
import { ConfirmDialog } from '../../ui/confirm-dialog.tsx';
import { ErrorPanel } from '../../ui/error-panel.tsx';
import { ExportButtons } from '../../ui/export-buttons.tsx';
import { Field } from '../../ui/field.tsx';
import { PageHeader } from '../../ui/page-header.tsx';
import { ProgressBar } from './progress-bar.tsx';
import { LinesSkeleton } from '../../ui/skeleton.tsx';
import { TableCard, TableNote, TableScroll } from '../../ui/table-card.tsx';
import { TimeText } from '../../ui/time-text.tsx';
import { formatBytes, formatInt } from '../../lib/format.ts';
import { SOURCE_LABELS, sourceLabel } from '../../../../contract/sources.ts';
import { remoteLabel, syncingConnections } from '../../lib/sync.ts';
import { MICROS } from '../../../../contract/instants.ts';
import { formatSpan } from '../../lib/time.ts';
import { useExportCurrentView } from '../../lib/view-export.ts';
import { ConnectionsSection } from './data-connections.tsx';
import { chooseFiles, type ImportFilesOptions, type NativeImportJob } from './data-import.ts';
import './data.css';

type JobState = 'queued' | 'uploading' | 'done' | 'failed';

interface ImportJob {
  id: string;
  /** The file's name; `path` (native imports) is shown on hover. */
  name: string;
  path?: string;
  /** Bytes, when known: a native import reports none. */
  size?: number;
  /** The file to upload; a native import has none (the server read the file from disk). */
  file?: File;
  source: string;
  project: string;
  state: JobState;
  sent: number;
  report?: ImportReport;
  error?: unknown;
}

function newId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return `${Date.now().toString(16)}-${Math.random().toString(16).slice(2)}`;
}

export function DataPage() {
  const qc = useQueryClient();
  const sources = useSources();
  const [source, setSource] = useState('');
  const [project, setProject] = useState('');
  const [jobs, setJobs] = useState<ImportJob[]>([]);
  const [dragging, setDragging] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const running = jobs.some((j) => j.state === 'uploading');
  const imports = useImports(running);
  const demo = useLoadDemo();
  const [toDelete, setToDelete] = useState<SourceListing | null>(null);
  const del = useDeleteSource();
  // Read only (the connections section polls): which stored records a connection syncs.
  const connections = useConnections(false).data?.result;

  const bridge = getBridge();
  const [nativeBusy, setNativeBusy] = useState(false);
  const [nativeError, setNativeError] = useState<unknown>(null);

  const patch = (id: string, p: Partial<ImportJob>) => setJobs((js) => js.map((j) => (j.id === id ? { ...j, ...p } : j)));

  // One upload at a time: the server imports serially anyway, and progress stays readable.
  useEffect(() => {
    if (running) return;
    const next = jobs.find((j) => j.state === 'queued');
    const file = next?.file;
    if (!next || !file) return;
    patch(next.id, { state: 'uploading' });
    uploadImport(file, {
      id: next.id,
      source: next.source || undefined,
      project: next.project || undefined,
      onProgress: (p) => patch(next.id, { sent: p.loaded }),
    }).then(
      (report) => {
        patch(next.id, { state: 'done', report, sent: file.size });
        void invalidateData(qc);
      },
      (error: unknown) => patch(next.id, { state: 'failed', error }),
    );
  }, [jobs, running, qc]);

  const addFiles = (files: FileList | File[]) => {
    const list = [...files];
    if (list.length === 0) return;
    setJobs((js) => [...list.map((file) => uploadJob(file, source, project.trim())), ...js]);
  };
  // The same file again with the project its records lacked; what was imported comes back as duplicates.
  // A natively imported file is not in the page's hands: the project goes into the Project
  // field, and choosing the file again imports it with that project.
  const reimport = (job: ImportJob, withProject: string) => {
    const file = job.file;
    if (file) setJobs((js) => [uploadJob(file, job.source, withProject), ...js]);
    else setProject(withProject);
  };

  const choose = () => {
    setNativeError(null);
    void chooseFiles({
      bridge,
      source,
      project,
      newId,
      pickInBrowser: () => fileInput.current?.click(),
      onBusy: setNativeBusy,
      onJobs: (done, options) => setJobs((js) => [...done.map((job) => fromNative(job, options)), ...js]),
      onError: setNativeError,
      refresh: () => refreshAll(qc),
    });
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    addFiles(e.dataTransfer.files);
  };

  const serverRuns = useMemo(() => new Map((imports.data ?? []).map((r) => [r.id, r])), [imports.data]);
  const listed = (sources.data ?? []).filter((s) => s.count > 0);
  const total = listed.reduce((n, s) => n + s.count, 0);
  // The current view (the buttons and the desktop menu's Export Current View): the stored sources table.
  const currentView = {
    what: 'stored sources',
    fileBase: 'sources',
    rows: sources.data ? listed : undefined,
    csvRows: () =>
      listed.map((s) => ({
        source: s.source,
        alias: s.alias,
        count: s.count,
        oldest: s.minIso,
        newest: s.maxIso,
        projects: s.projects.map((p) => `${p.ref}:${p.count}`).join(' '),
      })),
  };
  useExportCurrentView(currentView);

  return (
    <div className="page" data-testid="data-page">
      <PageHeader
        title="Data"
        description="Import Supabase / Logflare log exports and manage what is stored locally."
        actions={
          <button type="button" className="btn btn--small" data-testid="load-demo" disabled={demo.isPending} onClick={() => demo.mutate()}>
            {demo.isPending ? 'Loading demo data…' : 'Load demo data'}
          </button>
        }
      />
      {demo.isError && (
        <ErrorPanel
          error={demo.error}
          title={demo.error instanceof ApiError && demo.error.code === 404 ? 'This server has no demo data built in' : 'Loading the demo data failed'}
        />
      )}
      {demo.isSuccess && (
        <div className="notice notice--ok" data-testid="demo-result">
          Demo data loaded: {formatInt(demo.data.reduce((n, r) => n + r.imported, 0))} records imported into {demo.data.length} sources
          {demo.data.some((r) => r.duplicates > 0) && ` (${formatInt(demo.data.reduce((n, r) => n + r.duplicates, 0))} were already there)`}.
        </div>
      )}

      <section className="card">
        <div className="card__head">
          <h2>Import exports</h2>
          <span className="card__note">NDJSON, JSON array, saved endpoint response, or the CSV Supabase’s log explorer downloads; gzip-compressed too</span>
        </div>
        <div className="import-form">
          <div
            className={`dropzone${dragging ? ' is-dragging' : ''}`}
            data-testid="dropzone"
            onDragOver={(e) => {
              e.preventDefault();
              setDragging(true);
            }}
            onDragLeave={() => setDragging(false)}
            onDrop={onDrop}
          >
            <div className="dropzone__icon" aria-hidden="true">
              ⇪
            </div>
            <div>
              <strong>Drop export files here</strong> or{' '}
              <button type="button" className="link-btn" onClick={choose} disabled={nativeBusy} data-testid="choose-files" data-native={bridge ? true : undefined}>
                choose files
              </button>
            </div>
            {nativeBusy ? (
              <div className="muted dropzone__busy" data-testid="native-import-busy" role="status">
                <ProgressBar value={null} label="Import of the chosen files" />
                Importing the files chosen in the dialog…
              </div>
            ) : (
              <div className="muted" data-testid="dropzone-hint">
                {bridge ? 'Several files at once; the server reads them straight from disk, nothing is copied.' : 'Several files at once; large files stream without loading into memory.'}
              </div>
            )}
            <input
              ref={fileInput}
              type="file"
              multiple
              hidden
              data-testid="file-input"
              accept=".ndjson,.jsonl,.json,.csv,.txt,.gz,application/json,text/csv,application/gzip"
              onChange={(e) => {
                if (e.target.files) addFiles(e.target.files);
                e.target.value = '';
              }}
            />
          </div>
          <div className="import-options">
            <Field label="Source" htmlFor="import-source">
              <select id="import-source" className="select" value={source} onChange={(e) => setSource(e.target.value)} data-testid="import-source">
                <option value="">Recognize automatically</option>
                {SOURCE_LABELS.map((s) => (
                  <option key={s.name} value={s.name}>
                    {s.label} — {s.name} ({s.alias})
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Project (for exports without one)" htmlFor="import-project">
              <input
                id="import-project"
                className="input input--mono"
                placeholder="project ref, e.g. abcdefghijklmnopqrst"
                value={project}
                onChange={(e) => setProject(e.target.value)}
                data-testid="import-project"
              />
            </Field>
            <p className="muted small">
              Recognized from the file name (source name or alias) or from the records’ shape. Exports downloaded from one project’s log explorer usually carry no project field: a
              record whose host is <code>&lt;ref&gt;.supabase.co</code> takes that project; name it here for the others. A record whose host names another project is never given this one.
            </p>
          </div>
        </div>
        {nativeError !== null && (
          <div className="pad">
            <ErrorPanel error={nativeError} title="The import did not run" />
          </div>
        )}
        {jobs.length > 0 && (
          <ul className="import-jobs" data-testid="import-jobs">
            {jobs.map((job) => (
              <ImportJobRow
                key={job.id}
                job={job}
                server={serverRuns.get(job.id)}
                onDismiss={() => setJobs((js) => js.filter((j) => j.id !== job.id))}
                onReimport={(withProject) => reimport(job, withProject)}
              />
            ))}
          </ul>
        )}
      </section>

      <ConnectionsSection />

      <TableCard
        title="Stored sources"
        testId="sources-card"
        aside={
          listed.length > 0 && (
            <div className="card__tools">
              <span className="card__note">
                {formatInt(total)} records in {listed.length} {listed.length === 1 ? 'source' : 'sources'}
              </span>
              <ExportButtons {...currentView} />
            </div>
          )
        }
      >
        {sources.isError ? (
          <ErrorPanel error={sources.error} onRetry={() => void sources.refetch()} />
        ) : !sources.data ? (
          <LinesSkeleton widths={['100%', '100%', '80%']} />
        ) : listed.length === 0 ? (
          <TableNote testId="no-sources">
            Nothing stored yet. Import an export above — <code>edge_logs</code> feeds Logs and API usage, <code>function_edge_logs</code> feeds Functions — or load the demo data.
          </TableNote>
        ) : (
          <TableScroll className="fx-sources-table" testId="sources-table">
            <thead>
              <tr>
                <th>Source</th>
                <th className="num">Records</th>
                <th>Time span (local)</th>
                <th>Projects</th>
                <th className="fx-actions" aria-label="Actions" />
              </tr>
            </thead>
            <tbody>
              {listed.map((s) => (
                <tr key={s.source} data-testid="source-row" data-source={s.source}>
                  <td>
                    <div className="strong nowrap">{sourceLabel(s.source)}</div>
                    <div className="mono muted small">
                      {s.source} · {s.alias}
                    </div>
                  </td>
                  <td className="num mono" data-testid="source-count">
                    {formatInt(s.count)}
                  </td>
                  <td className="small" data-testid="source-span">
                    {s.minTimestamp !== null && s.maxTimestamp !== null ? (
                      <>
                        {/* Two unbreakable halves: a narrow window wraps between them, never inside a time. */}
                        <span className="mono">
                          <span className="nowrap">
                            <TimeText us={s.minTimestamp} precision="minute" /> →
                          </span>{' '}
                          <span className="nowrap">
                            <TimeText us={s.maxTimestamp} precision="minute" />
                          </span>
                        </span>
                        <div className="muted">{humanSpan(s.maxTimestamp - s.minTimestamp)}</div>
                      </>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td>
                    <div className="chips">
                      {s.projects.slice(0, 3).map((p) => {
                        const by = syncingConnections(connections, s.source, p.ref);
                        return (
                          <span key={p.ref} className="chip mono" title={`${formatInt(p.count)} records${by.length ? `; synced by the connection to ${by.map(remoteLabel).join(', ')}` : ''}`}>
                            {p.ref} <span className="muted">{formatInt(p.count)}</span>
                            {by.length > 0 && (
                              <span className="chip__sync" data-testid="synced-label">
                                synced · {remoteLabel(by[0]!)}
                              </span>
                            )}
                          </span>
                        );
                      })}
                      {s.projects.length > 3 && <span className="chip muted">+{s.projects.length - 3} more</span>}
                    </div>
                    {s.functionIds.length > 0 && <div className="muted small">{new Set(s.functionIds.map((f) => f.functionId)).size} function ids</div>}
                  </td>
                  <td className="actions fx-actions">
                    <button type="button" className="btn btn--small btn--ghost-danger" onClick={() => setToDelete(s)} data-testid="delete-source">
                      Delete…
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </TableScroll>
        )}
      </TableCard>

      <ConfirmDialog
        open={toDelete !== null}
        title={`Delete ${toDelete ? sourceLabel(toDelete.source) : ''} data?`}
        confirmLabel={`Delete ${toDelete ? formatInt(toDelete.count) : ''} records`}
        danger
        busy={del.isPending}
        onCancel={() => setToDelete(null)}
        onConfirm={() => {
          if (!toDelete) return;
          del.mutate(toDelete.source, { onSettled: () => setToDelete(null) });
        }}
      >
        <p>
          All {toDelete ? formatInt(toDelete.count) : ''} records of <code>{toDelete?.source}</code> ({toDelete?.alias}) will be removed from the local store. The export files you imported
          them from are not touched; you can import them again.
        </p>
      </ConfirmDialog>
      {del.isError && <ErrorPanel error={del.error} title="Deleting failed" />}
    </div>
  );
}

function uploadJob(file: File, source: string, project: string): ImportJob {
  return { id: newId(), name: file.name, size: file.size, file, source, project, state: 'queued', sent: 0 };
}

/** A natively imported file as a row: already done or failed, with the source and project it was imported with. */
function fromNative(job: NativeImportJob, options: ImportFilesOptions): ImportJob {
  return {
    id: job.id,
    name: job.name,
    path: job.path,
    source: options.source ?? '',
    project: options.project ?? '',
    state: job.state,
    sent: 0,
    ...(job.report ? { report: job.report } : {}),
    ...(job.reason !== undefined ? { error: new Error(job.reason) } : {}),
  };
}

function humanSpan(us: number): string {
  if (us >= 2 * MICROS.day) return `${(us / MICROS.day).toFixed(1)} days`;
  if (us >= 2 * MICROS.hour) return `${(us / MICROS.hour).toFixed(1)} h`;
  if (us >= MICROS.minute) return `${Math.round(us / MICROS.minute)} min`;
  return formatSpan(Math.max(MICROS.second, Math.round(us / MICROS.second) * MICROS.second));
}

function ImportJobRow({
  job,
  server,
  onDismiss,
  onReimport,
}: {
  job: ImportJob;
  server: { bytes: number; records: number; state: string } | undefined;
  onDismiss: () => void;
  onReimport: (project: string) => void;
}) {
  const size = job.size ?? 0;
  const sentRatio = size > 0 ? job.sent / size : job.state === 'done' ? 1 : 0;
  const report = job.report;
  const name = job.name;
  return (
    <li className={`import-job import-job--${job.state}`} data-testid="import-job" data-state={job.state} data-native={job.file ? undefined : true}>
      <div className="import-job__head">
        <span className="mono strong ellipsis" title={job.path ?? name} data-testid="import-job-name">
          {name}
        </span>
        {job.size !== undefined ? <span className="muted small">{formatBytes(job.size)}</span> : <span className="muted small">from disk</span>}
        <span className={`state-pill state-pill--${job.state}`}>{{ queued: 'Queued', uploading: 'Importing', done: 'Done', failed: 'Failed' }[job.state]}</span>
        {job.state !== 'uploading' && (
          <button type="button" className="icon-btn" aria-label={`Dismiss ${name}`} onClick={onDismiss}>
            ×
          </button>
        )}
      </div>
      {(job.state === 'uploading' || job.state === 'queued') && (
        <div className="import-job__progress" data-testid="import-progress">
          <ProgressBar value={job.state === 'queued' ? 0 : sentRatio} label={`Upload of ${name}`} />
          <div className="small muted">
            {job.state === 'queued' ? (
              'Waiting for the previous import'
            ) : (
              <>
                Sent {formatBytes(job.sent)} of {formatBytes(size)} · server read {formatBytes(server?.bytes ?? 0)} ·{' '}
                <span data-testid="import-records">{formatInt(server?.records ?? 0)} records</span>
              </>
            )}
          </div>
        </div>
      )}
      {job.state === 'failed' && <ErrorPanel error={job.error} title={`Import of ${name} failed`} />}
      {report && (
        <div className="import-report" data-testid="import-report">
          <ProgressBar value={1} label={`Import of ${name} done`} tone="ok" />
          <div className="import-report__figures">
            <span>
              Source <strong data-testid="report-source">{report.source}</strong>
              <span className="muted">
                {' '}
                ({sourceLabel(report.source)}
                {job.source ? ', as chosen' : ', recognized'}) · {report.format}
              </span>
            </span>
            <span>
              <strong data-testid="report-imported">{formatInt(report.imported)}</strong> imported
            </span>
            <span>
              <strong data-testid="report-duplicates">{formatInt(report.duplicates)}</strong> duplicates
            </span>
            <span className={report.rejected > 0 ? 'text-error' : undefined}>
              <strong data-testid="report-rejected">{formatInt(report.rejected)}</strong> rejected
            </span>
          </div>
          {report.note && (
            <p className="muted small" data-testid="report-note">
              {report.note[0]!.toUpperCase() + report.note.slice(1)}.
            </p>
          )}
          {report.errors.length > 0 && <ReportErrors report={report} />}
          {noProjectCount(report) > 0 && <ProjectPrompt report={report} fileName={job.file ? undefined : name} onReimport={onReimport} />}
        </div>
      )}
    </li>
  );
}

/** The reason the importer gives a record that names no project and got no project option. */
const NO_PROJECT = 'no project:';

/** Listed rejections for want of a project (the list is capped, so this is a lower bound when errors were omitted). */
function noProjectCount(report: ImportReport): number {
  return report.errors.filter((e) => e.reason.startsWith(NO_PROJECT)).length;
}

function position(e: ImportErrorEntry): string {
  return e.line !== undefined ? `line ${e.line}` : e.index !== undefined ? `item ${e.index}` : 'the file';
}

/** Listed errors grouped by reason, most frequent first: 50 identical reasons read as one line. */
function groupReasons(errors: readonly ImportErrorEntry[]): Array<{ reason: string; count: number; first: ImportErrorEntry[] }> {
  const groups = new Map<string, { reason: string; count: number; first: ImportErrorEntry[] }>();
  for (const e of errors) {
    let g = groups.get(e.reason);
    if (!g) groups.set(e.reason, (g = { reason: e.reason, count: 0, first: [] }));
    g.count++;
    if (g.first.length < 4) g.first.push(e);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

const SHOWN_GROUPS = 5;

function ReportErrors({ report }: { report: ImportReport }) {
  const groups = groupReasons(report.errors);
  const hiddenGroups = groups.slice(SHOWN_GROUPS).reduce((n, g) => n + g.count, 0);
  return (
    <ul className="import-report__errors fx-report-errors" data-testid="report-errors">
      {groups.slice(0, SHOWN_GROUPS).map((g) => (
        <li key={g.reason} data-testid="report-error-group" data-count={g.count}>
          <span className="mono">{g.count === 1 ? position(g.first[0]!) : `${formatInt(g.count)} rows`}</span> {g.reason}
          {g.count > 1 && (
            <span className="muted fx-report-where">
              {' '}
              ({g.first.map(position).join(', ')}
              {g.count > g.first.length ? ', …' : ''})
            </span>
          )}
        </li>
      ))}
      {hiddenGroups > 0 && (
        <li className="muted">
          and {formatInt(hiddenGroups)} more with {groups.length - SHOWN_GROUPS} other {groups.length - SHOWN_GROUPS === 1 ? 'reason' : 'reasons'}
        </li>
      )}
      {report.errorsOmitted > 0 && <li className="muted">and {formatInt(report.errorsOmitted)} more rejections not listed</li>}
    </ul>
  );
}

/**
 * Records that name no project (no project field, no `<ref>.supabase.co` host) were rejected:
 * ask which project they are from and import the file again with it. Records already imported
 * come back as duplicates; records whose host names another project stay rejected.
 * `fileName` is set for a natively imported file, which the page cannot send again itself:
 * the project goes into the Project field, and the user chooses the file again.
 */
function ProjectPrompt({ report, fileName, onReimport }: { report: ImportReport; fileName?: string; onReimport: (project: string) => void }) {
  const [value, setValue] = useState('');
  const [asked, setAsked] = useState(false);
  const count = noProjectCount(report);
  const ref = value.trim();
  const id = useId();
  if (asked && fileName !== undefined) {
    return (
      <p className="muted small" data-testid="project-prompt-sent">
        The Project field above now says <code>{ref}</code>: choose <code>{fileName}</code> again and it is imported with that project. Records this import stored come back as
        duplicates; records whose host names another project keep that project and are refused under <code>{ref}</code>.
      </p>
    );
  }
  if (asked) {
    return (
      <p className="muted small" data-testid="project-prompt-sent">
        Importing again as project <code>{ref}</code>: see the new report above. Records this import stored come back as duplicates; records whose host names another project keep
        that project and are refused under <code>{ref}</code>.
      </p>
    );
  }
  return (
    <form
      className="notice notice--warn fx-project-prompt"
      data-testid="project-prompt"
      onSubmit={(e) => {
        e.preventDefault();
        if (!ref) return;
        setAsked(true);
        onReimport(ref);
      }}
    >
      <div>
        <strong>
          {formatInt(count)}
          {report.errorsOmitted > 0 ? '+' : ''} {count === 1 ? 'record names' : 'records name'} no project.
        </strong>{' '}
        They have no project field and their host is not a <code>&lt;ref&gt;.supabase.co</code> address. Which project are they from?
      </div>
      <div className="fx-project-prompt__form">
        <input id={id} aria-label="Project ref for the records without one" className="input input--mono" placeholder="project ref" value={value} onChange={(e) => setValue(e.target.value)} data-testid="project-prompt-input" spellCheck={false} />
        <button type="submit" className="btn btn--small btn--primary" disabled={!ref} data-testid="project-prompt-submit">
          {fileName !== undefined ? 'Use this project' : 'Import again with this project'}
        </button>
      </div>
    </form>
  );
}
