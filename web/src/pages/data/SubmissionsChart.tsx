import { useId } from 'react';
import { api } from '../../api.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { ErrorText } from '../../ui/ErrorText.js';
import type { SubmissionCounts, SubmissionRefusal } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';

/** Why submissions were refused, in words, in the order the summary lists them. */
const REFUSAL_WORDS: Record<SubmissionRefusal, string> = {
  ORIGIN_NOT_ALLOWED: 'from a site not allowed',
  RATE_LIMITED: 'over the rate limit',
  CAPTCHA_FAILED: 'CAPTCHA missing or failed',
  HONEYPOT: 'honeypot filled in (bots)',
  TOO_LARGE: 'too large',
  INVALID: 'not valid data',
};

/** The counts change on their own, as visitors post: read them again every minute, and on coming back to the tab. */
const REFRESH_MS = 60_000;

const BAR_WIDTH = 10;
const CHART_HEIGHT = 60;

/**
 * Accepted and refused public submissions per hour over the last 24 hours: bars drawn in plain
 * SVG, with the same figures in words beside them for screen readers (and a tooltip per hour).
 */
export function SubmissionsChart(props: { collection: string }): React.JSX.Element {
  const path = collectionPath(props.collection, 'submissions');
  const counts = useApiQuery([path], (signal) => api<SubmissionCounts>('GET', path, undefined, signal), { refreshEveryMs: REFRESH_MS });
  const titleId = useId();
  const summaryId = useId();
  const data = counts.data;
  const refusals = data ? (Object.keys(REFUSAL_WORDS) as SubmissionRefusal[]).filter((reason) => (data.refusedBy[reason] ?? 0) > 0) : [];
  const highest = Math.max(1, ...(data?.hours ?? []).map((hour) => hour.accepted + hour.refused));
  const height = (count: number) => (count / highest) * CHART_HEIGHT;

  return (
    <section className="panel stack submissions-chart" aria-labelledby={titleId}>
      <h2 id={titleId}>Submissions in the last 24 hours</h2>
      <ErrorText error={counts.error} />
      {data ? (
        <>
          <figure className="chart">
            <svg viewBox={`0 0 ${BAR_WIDTH * data.hours.length} ${CHART_HEIGHT}`} preserveAspectRatio="none" role="img" aria-labelledby={`${titleId} ${summaryId}`}>
              <title>Accepted and refused submissions per hour, oldest first</title>
              {data.hours.map((hour, index) => (
                <g key={hour.hour}>
                  <title>{`${hourLabel(hour.hour)}: ${hour.accepted} accepted, ${hour.refused} refused`}</title>
                  {/* An invisible full-height bar, so the hour's tooltip is there even when it is empty. */}
                  <rect x={index * BAR_WIDTH} y={0} width={BAR_WIDTH} height={CHART_HEIGHT} fill="transparent" />
                  <rect className="bar-accepted" x={index * BAR_WIDTH + 1} y={CHART_HEIGHT - height(hour.accepted)} width={BAR_WIDTH - 2} height={height(hour.accepted)} />
                  <rect
                    className="bar-refused"
                    x={index * BAR_WIDTH + 1}
                    y={CHART_HEIGHT - height(hour.accepted) - height(hour.refused)}
                    width={BAR_WIDTH - 2}
                    height={height(hour.refused)}
                  />
                </g>
              ))}
            </svg>
            <figcaption className="chart-axis" aria-hidden="true">
              <span>{data.hours[0] ? hourLabel(data.hours[0].hour) : ''}</span>
              <span className="chart-legend">
                <span className="swatch swatch-accepted" /> accepted <span className="swatch swatch-refused" /> refused
              </span>
              <span>now</span>
            </figcaption>
          </figure>
          <p id={summaryId} className="chart-summary">
            {data.accepted} accepted, {data.refused} refused in the last 24 hours
            {refusals.length ? ': ' + refusals.map((reason) => `${data.refusedBy[reason]} ${REFUSAL_WORDS[reason]}`).join(', ') : ''}.
          </p>
        </>
      ) : null}
    </section>
  );
}

/** The start of an hour in the person's own time: "14:00". */
function hourLabel(iso: string): string {
  return new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}
