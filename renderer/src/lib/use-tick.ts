import { useEffect, useState } from 'react';

/**
 * `performance.now()`, read again every `ms` while the caller is mounted: what ages and
 * countdowns tick on between two answers of the server (they measure time elapsed on this
 * page, added to an instant the server gave; never the browser's idea of the date).
 */
export function useTick(ms: number): number {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    const id = window.setInterval(() => setNow(performance.now()), ms);
    return () => window.clearInterval(id);
  }, [ms]);
  return now;
}
