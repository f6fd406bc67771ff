/**
 * The compared-period choice: off, the previous period, 1 day or 1 week earlier. One control for
 * the explorer (a compact select in its range bar) and the Functions page (under a "Compare" label).
 */
import { COMPARE_CHOICES, COMPARE_LABELS, type CompareChoice } from '../lib/compare.ts';

export function ComparePicker({
  value,
  onChange,
  id,
  compact = false,
  title,
}: {
  value: CompareChoice | undefined;
  onChange: (choice: CompareChoice | undefined) => void;
  /** Given when a visible label names the control; without one the options say what they are. */
  id?: string;
  /** The explorer's small select, with no label beside it. */
  compact?: boolean;
  title?: string;
}) {
  const labelled = id !== undefined;
  return (
    <select
      id={id}
      className={compact ? 'select select--small' : 'select'}
      aria-label={labelled ? undefined : 'Compare with another period'}
      title={title}
      value={value ?? ''}
      data-testid="compare-picker"
      onChange={(e) => onChange(e.target.value === '' ? undefined : (e.target.value as CompareChoice))}
    >
      <option value="">{labelled ? 'Off' : 'Compare: off'}</option>
      {COMPARE_CHOICES.map((c) => (
        <option key={c} value={c}>
          {labelled ? COMPARE_LABELS[c] : `vs ${COMPARE_LABELS[c].toLowerCase()}`}
        </option>
      ))}
    </select>
  );
}
