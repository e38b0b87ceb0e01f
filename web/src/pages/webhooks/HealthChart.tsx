import type { WebhookHealthHours } from '../../api-types.js';

const WIDTH = 480;
const HEIGHT = 80;
const GAP = 2;

/**
 * The last 24 hours of attempts, one pair of bars an hour (successes green, failures red, stacked),
 * oldest on the left. The numbers are in the SVG's title and label, and each bar's own title, so
 * a screen reader reads the counts, not a picture.
 */
export function HealthChart(props: { hours: WebhookHealthHours['hours'] }): React.JSX.Element {
  const { hours } = props;
  const succeeded = hours.reduce((sum, hour) => sum + hour.succeeded, 0);
  const failed = hours.reduce((sum, hour) => sum + hour.failed, 0);
  const most = Math.max(1, ...hours.map((hour) => hour.succeeded + hour.failed));
  const barWidth = WIDTH / hours.length - GAP;
  const summary = `Attempts in the last 24 hours: ${succeeded} succeeded, ${failed} failed.`;
  const hourLabel = (iso: string) => new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return (
    <figure className="health-figure">
      <svg className="health-chart" viewBox={`0 0 ${WIDTH} ${HEIGHT + 1}`} width={WIDTH} height={HEIGHT + 1} role="img" aria-label={summary}>
        <title>{summary}</title>
        {hours.map((hour, i) => {
          const x = i * (barWidth + GAP);
          const okHeight = (hour.succeeded / most) * HEIGHT;
          const failedHeight = (hour.failed / most) * HEIGHT;
          return (
            <g key={hour.hour}>
              <title>{`${hourLabel(hour.hour)}: ${hour.succeeded} succeeded, ${hour.failed} failed`}</title>
              {hour.succeeded > 0 ? <rect className="bar-succeeded" x={x} y={HEIGHT - okHeight} width={barWidth} height={okHeight} /> : null}
              {hour.failed > 0 ? <rect className="bar-failed" x={x} y={HEIGHT - okHeight - failedHeight} width={barWidth} height={failedHeight} /> : null}
            </g>
          );
        })}
        <line className="baseline" x1={0} y1={HEIGHT + 0.5} x2={WIDTH} y2={HEIGHT + 0.5} />
      </svg>
      <figcaption className="chart-legend">
        <span>
          <span className="swatch" style={{ background: 'var(--ok)' }} aria-hidden="true" />
          {succeeded} succeeded
        </span>
        <span>
          <span className="swatch" style={{ background: 'var(--danger)' }} aria-hidden="true" />
          {failed} failed
        </span>
        <span className="hint">last 24 hours, an hour a bar</span>
      </figcaption>
    </figure>
  );
}
