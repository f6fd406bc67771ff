import { useEffect, useState } from 'react';
import { copyText } from '../lib/download.ts';

/** A button that copies text and says so for a moment. */
export function CopyButton({
  text,
  label = 'Copy',
  title,
  className = 'btn btn--small',
  testId,
}: {
  text: string | (() => string);
  label?: string;
  title?: string;
  className?: string;
  testId?: string;
}) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const t = setTimeout(() => setState('idle'), 1600);
    return () => clearTimeout(t);
  }, [state]);
  return (
    <button
      type="button"
      className={className}
      title={title}
      data-testid={testId}
      onClick={() => {
        copyText(typeof text === 'function' ? text() : text).then(
          () => setState('copied'),
          () => setState('failed'),
        );
      }}
    >
      {state === 'copied' ? 'Copied ✓' : state === 'failed' ? 'Copy failed' : label}
    </button>
  );
}
