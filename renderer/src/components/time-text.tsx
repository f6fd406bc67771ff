import { formatDateTime, formatUtc, isoMicros, type TimePrecision } from '../lib/time.ts';

/** A local time whose tooltip gives the UTC time (µs) and the raw microseconds. */
export function TimeText({ us, precision = 'second', className }: { us: number; precision?: TimePrecision; className?: string }) {
  return (
    <time className={className} dateTime={isoMicros(us)} title={`${formatUtc(us, 'us')}\n${us} µs since epoch`}>
      {formatDateTime(us, precision)}
    </time>
  );
}
