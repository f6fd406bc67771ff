import { useClock } from '../api/hooks.ts';
import { formatInstant } from '../lib/time-display.ts';
import { formatIsoMicros } from '../../../contract/instants.ts';
import { formatDateTime, formatUtc, localZoneName, type TimePrecision } from '../lib/time.ts';
import { useTimeMode } from './time-mode.tsx';

/**
 * A time as the time setting shows it (local, UTC, or relative to the server's clock), whose
 * tooltip gives the local and UTC times (µs) and the raw microseconds.
 */
export function TimeText({ us, precision = 'second', className }: { us: number; precision?: TimePrecision; className?: string }) {
  const mode = useTimeMode();
  const now = useClock().data?.now;
  return (
    <time className={className} dateTime={formatIsoMicros(us)} title={`${formatDateTime(us, 'us')} ${localZoneName()}\n${formatUtc(us, 'us')}\n${us} µs since epoch`}>
      {formatInstant(us, mode, now, precision)}
    </time>
  );
}
