import { formatTime } from './dates.js';

/** A stored moment in the person's own time zone and language; the exact UTC time shows on hover. */
export function Time(props: { value: string }): React.JSX.Element {
  return (
    <time dateTime={props.value} title={props.value}>
      {formatTime(props.value)}
    </time>
  );
}
