/**
 * The time display setting (UTC / local / relative), kept in this browser's storage like the
 * theme: a preference of the person, not part of a view's URL. Every component that shows a
 * time reads it with useTimeMode and re-renders when it changes.
 */
import { useSyncExternalStore } from 'react';
import { isTimeMode, TIME_MODE_LABELS, TIME_MODES, type TimeMode } from '../lib/time-display.ts';
import { Segmented } from './segmented.tsx';

const KEY = 'log-explorer.time';
const listeners = new Set<() => void>();

function read(): TimeMode {
  try {
    const v = localStorage.getItem(KEY);
    return isTimeMode(v) ? v : 'local';
  } catch {
    return 'local';
  }
}

let current: TimeMode | null = null;

function subscribe(cb: () => void): () => void {
  listeners.add(cb);
  // Another window of the app changed it.
  const onStorage = (e: StorageEvent) => {
    if (e.key !== KEY) return;
    current = read();
    cb();
  };
  window.addEventListener('storage', onStorage);
  return () => {
    listeners.delete(cb);
    window.removeEventListener('storage', onStorage);
  };
}

function snapshot(): TimeMode {
  if (current === null) current = read();
  return current;
}

export function setTimeMode(mode: TimeMode): void {
  current = mode;
  try {
    if (mode === 'local') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, mode);
  } catch {
    // not persisted
  }
  for (const cb of listeners) cb();
}

export function useTimeMode(): TimeMode {
  return useSyncExternalStore(subscribe, snapshot, () => 'local' as const);
}

/** Local / UTC / Relative. */
export function TimeModeSwitch({ testId = 'time-mode' }: { testId?: string }) {
  const mode = useTimeMode();
  return <Segmented label="Show times as" options={TIME_MODES} value={mode} onChange={setTimeMode} labels={TIME_MODE_LABELS} testId={testId} />;
}
