import { formatInt } from '../lib/format.ts';
import type { ProjectOption } from '../lib/source-projects.ts';
import { Field } from './field.tsx';

/**
 * A picker's count, labelled as what it is: every stored record (from /api/sources), not the
 * page's window. Every picker that shows a count says it this way; the unit goes in the
 * picker's title, since the options must fit the select's width.
 */
export function allTimeCount(count: number): string {
  return `${formatInt(count)} all time`;
}

/** The title of a picker whose counts are all-time. */
export function allTimeHint(unit: string): string {
  return `Counts are ${unit} of all time (every stored record), not of the window shown`;
}

/** Project refs with their all-time counts of the page's source (`unit`: what is counted, for the title). */
export function ProjectPicker({ projects, value, onChange, unit = 'records' }: { projects: readonly ProjectOption[]; value: string | null; onChange: (ref: string) => void; unit?: string }) {
  const listed = value && !projects.some((p) => p.ref === value) ? [...projects, { ref: value, count: 0 }] : projects;
  return (
    <Field label="Project" htmlFor="project-picker">
      <select id="project-picker" className="select select--mono" value={value ?? ''} onChange={(e) => onChange(e.target.value)} data-testid="project-picker" title={allTimeHint(unit)}>
        {!value && <option value="">Choose a project</option>}
        {listed.map((p) => (
          <option key={p.ref} value={p.ref}>
            {p.ref} · {allTimeCount(p.count)}
          </option>
        ))}
      </select>
    </Field>
  );
}
