import { formatTime, formatTimeCompact, formatTimeFull } from './dates.js';

/**
 * A stored moment in the person's own time zone and language; the full time shows on hover.
 * `compact` is for a column of times: short, on one line.
 */
export function Time(props: { value: string; compact?: boolean }): React.JSX.Element {
  return (
    <time dateTime={props.value} title={props.compact ? formatTimeFull(props.value) : props.value} className={props.compact ? 'time-compact' : undefined}>
      {props.compact ? formatTimeCompact(props.value) : formatTime(props.value)}
    </time>
  );
}
