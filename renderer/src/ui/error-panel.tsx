import { ApiError } from '../api/client.ts';

/**
 * The one way an error is shown: the API's message, its status, and the parameter (location)
 * each detail blames, so "project: invalid regular expression" reads at a glance.
 */
export function ErrorPanel({ error, title, onRetry }: { error: unknown; title?: string; onRetry?: () => void }) {
  const info =
    error instanceof ApiError
      ? error.info
      : { code: 0, status: 'ERROR', message: error instanceof Error ? error.message : String(error), errors: [] as Array<{ reason: string; location?: string; message: string }> };
  // A detail that only repeats the message adds its location and reason, not the text again.
  const details = info.errors.filter((d) => d.location || d.message !== info.message);
  const clientError = info.code >= 400 && info.code < 500;
  const blamed = info.errors.map((d) => d.location).filter((l): l is string => !!l);
  return (
    <div className="error-panel" role="alert" data-testid="error-panel">
      <div className="error-panel__head">
        <span className="error-panel__icon" aria-hidden="true">!</span>
        <div className="error-panel__title">
          {title ?? (blamed.length ? `The server rejected parameter ${blamed.map((l) => `“${l}”`).join(', ')}` : 'The request failed')}
        </div>
        {info.code > 0 && (
          <span className="error-panel__code">
            {info.code} {info.status}
          </span>
        )}
      </div>
      <p className="error-panel__message">{info.message}</p>
      {details.length > 0 && (
        <ul className="error-panel__details">
          {details.map((d, i) => (
            <li key={i}>
              {d.location && (
                <code className="error-panel__location" data-testid="error-location">
                  {d.location}
                </code>
              )}
              {d.message !== info.message && <span>{d.message}</span>}
              {d.reason && <span className="error-panel__reason">{d.reason}</span>}
            </li>
          ))}
        </ul>
      )}
      {onRetry && !clientError && (
        <button type="button" className="btn btn--small" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}
