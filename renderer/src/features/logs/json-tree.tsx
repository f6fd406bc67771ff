import { useState, type ReactNode } from 'react';

/** A step into a JSON value: an object's key or an array's index. */
export type JsonPath = ReadonlyArray<string | number>;

/** What to show after a scalar (e.g. filter buttons), given where it sits and its value. */
export type ScalarActions = (path: JsonPath, value: unknown) => ReactNode;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function isContainer(v: unknown): v is Json[] | Record<string, Json> {
  return v !== null && typeof v === 'object';
}

function Primitive({ value }: { value: unknown }) {
  if (value === null) return <span className="json-null">null</span>;
  if (typeof value === 'string') return <span className="json-string">{JSON.stringify(value)}</span>;
  if (typeof value === 'number') return <span className="json-number">{String(value)}</span>;
  if (typeof value === 'boolean') return <span className="json-bool">{String(value)}</span>;
  return <span className="json-null">{String(value)}</span>;
}

function Node({ name, value, depth, openDepth, last, path, actions }: { name?: string; value: unknown; depth: number; openDepth: number; last: boolean; path: JsonPath; actions?: ScalarActions }) {
  const [open, setOpen] = useState(depth < openDepth);
  const comma = last ? '' : ',';
  const keyLabel = name !== undefined ? <span className="json-key">{JSON.stringify(name)}: </span> : null;
  if (!isContainer(value)) {
    return (
      <div className="json-line">
        {keyLabel}
        <Primitive value={value} />
        {comma}
        {actions?.(path, value)}
      </div>
    );
  }
  const entries: Array<[string | undefined, unknown]> = Array.isArray(value) ? value.map((v) => [undefined, v]) : Object.entries(value);
  const [openB, closeB] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0) {
    return (
      <div className="json-line">
        {keyLabel}
        {openB}
        {closeB}
        {comma}
      </div>
    );
  }
  const summary = Array.isArray(value) ? `${entries.length} ${entries.length === 1 ? 'item' : 'items'}` : `${entries.length} ${entries.length === 1 ? 'key' : 'keys'}`;
  return (
    <div className="json-node">
      <div className="json-line">
        <button type="button" className="json-toggle" aria-expanded={open} aria-label={open ? 'Collapse' : 'Expand'} onClick={() => setOpen(!open)}>
          {open ? '▾' : '▸'}
        </button>
        {keyLabel}
        {openB}
        {!open && (
          <button type="button" className="json-collapsed" onClick={() => setOpen(true)}>
            … {summary}
          </button>
        )}
        {!open && `${closeB}${comma}`}
      </div>
      {open && (
        <>
          <div className="json-children">
            {entries.map(([k, v], i) => (
              <Node key={k ?? i} name={k} value={v} depth={depth + 1} openDepth={openDepth} last={i === entries.length - 1} path={[...path, k ?? i]} actions={actions} />
            ))}
          </div>
          <div className="json-line">
            {closeB}
            {comma}
          </div>
        </>
      )}
    </div>
  );
}

/**
 * Pretty-printed JSON with collapsible objects and arrays; "expand all" and "collapse" remount
 * it. `actions` adds controls after each scalar (the explorer's filter buttons).
 */
export function JsonTree({ value, openDepth = 4, actions }: { value: unknown; openDepth?: number; actions?: ScalarActions }) {
  const [depth, setDepth] = useState(openDepth);
  const [generation, setGeneration] = useState(0);
  return (
    <div className="json-tree">
      <div className="json-tree__tools">
        <button
          type="button"
          className="link-btn"
          onClick={() => {
            setDepth(99);
            setGeneration((g) => g + 1);
          }}
        >
          Expand all
        </button>
        <button
          type="button"
          className="link-btn"
          onClick={() => {
            setDepth(1);
            setGeneration((g) => g + 1);
          }}
        >
          Collapse
        </button>
      </div>
      <div className="json-tree__body" key={generation}>
        <Node value={value} depth={0} openDepth={depth} last path={[]} actions={actions} />
      </div>
    </div>
  );
}
