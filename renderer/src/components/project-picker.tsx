import { formatInt } from '../lib/format.ts';
import { Field } from './field.tsx';

export interface ProjectOption {
  ref: string;
  count: number;
}

/** Project refs with their record counts in the page's source. */
export function ProjectPicker({ projects, value, onChange, unit = 'records' }: { projects: readonly ProjectOption[]; value: string | null; onChange: (ref: string) => void; unit?: string }) {
  const listed = value && !projects.some((p) => p.ref === value) ? [...projects, { ref: value, count: 0 }] : projects;
  return (
    <Field label="Project" htmlFor="project-picker">
      <select id="project-picker" className="select select--mono" value={value ?? ''} onChange={(e) => onChange(e.target.value)} data-testid="project-picker">
        {!value && <option value="">Choose a project</option>}
        {listed.map((p) => (
          <option key={p.ref} value={p.ref}>
            {p.ref} · {formatInt(p.count)} {unit}
          </option>
        ))}
      </select>
    </Field>
  );
}
