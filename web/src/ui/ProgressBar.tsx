/** Progress of a long action, 0..1, with words for screen readers. */
export function ProgressBar(props: { value: number; label: string }): React.JSX.Element {
  const percent = Math.round(Math.min(1, Math.max(0, props.value)) * 100);
  return (
    <div className="progress">
      <label>
        <span>{props.label}</span>
        <progress max={100} value={percent} aria-valuetext={`${percent}%`}>
          {percent}%
        </progress>
      </label>
      <span aria-hidden="true" className="progress-number">
        {percent}%
      </span>
    </div>
  );
}
