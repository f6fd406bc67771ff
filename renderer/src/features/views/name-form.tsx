/** The menu's name forms: naming the current view to save it, and renaming a saved one. */
import { useEffect, useId, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { ApiError } from '../../api/client.ts';
import { errorText } from './view-labels.ts';

const MAX_NAME_CHARS = 100;

export function SaveForm({
  initial,
  describe,
  pending,
  error,
  onSave,
  onCancel,
}: {
  initial: string;
  describe: string;
  pending: boolean;
  error: Error | null;
  onSave: (name: string) => void;
  onCancel: () => void;
}) {
  const hintId = useId();
  return (
    <NameForm
      className="sv-form sv-form--save"
      label="Name this view"
      initial={initial}
      submitLabel="Save"
      pending={pending}
      error={error}
      hint={
        <p className="sv-form__hint" id={hintId}>
          {describe}
        </p>
      }
      hintId={hintId}
      onSubmit={onSave}
      onCancel={onCancel}
      testId="sv-save-form"
    />
  );
}

export function NameForm({
  className,
  label,
  initial,
  submitLabel,
  pending,
  error,
  hint,
  hintId,
  onSubmit,
  onCancel,
  testId,
}: {
  className: string;
  label: string;
  initial: string;
  submitLabel: string;
  pending: boolean;
  error: Error | null;
  hint?: ReactNode;
  hintId?: string;
  onSubmit: (name: string) => void;
  onCancel: () => void;
  testId: string;
}) {
  const [name, setName] = useState(initial);
  const inputRef = useRef<HTMLInputElement>(null);
  const errorId = useId();
  const fieldError = error instanceof ApiError && error.locations.includes('name');
  useEffect(() => {
    inputRef.current?.focus();
    inputRef.current?.select();
  }, []);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (name.trim() && !pending) onSubmit(name.trim());
  };
  return (
    <form
      className={className}
      onSubmit={submit}
      data-testid={testId}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          // Escape ends the edit, not the whole menu.
          e.preventDefault();
          e.stopPropagation();
          onCancel();
        }
      }}
    >
      <input
        ref={inputRef}
        className="input sv-form__input"
        aria-label={label}
        placeholder={label}
        value={name}
        maxLength={MAX_NAME_CHARS * 2}
        onChange={(e) => setName(e.target.value)}
        aria-invalid={fieldError || undefined}
        aria-describedby={[error ? errorId : '', hintId ?? ''].filter(Boolean).join(' ') || undefined}
        data-testid="sv-name-input"
      />
      <div className="sv-form__buttons">
        <button type="submit" className="btn btn--small btn--primary" disabled={pending || !name.trim()} data-testid="sv-name-submit">
          {pending ? 'Saving…' : submitLabel}
        </button>
        <button type="button" className="btn btn--small" onClick={onCancel}>
          Cancel
        </button>
      </div>
      {hint}
      {error && (
        <p className="sv-form__error" id={errorId} role="alert" data-testid="sv-error">
          {errorText(error)}
        </p>
      )}
    </form>
  );
}

