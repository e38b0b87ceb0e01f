import { Time } from '../../ui/Time.js';
import type { AttemptResult } from '../../api-types.js';

/** How the receiver answered one call: status, time taken, error, response headers and body. */
export function AttemptDetails(props: { attempt: AttemptResult & { at?: string }; title: string }): React.JSX.Element {
  const { attempt } = props;
  const headers = Object.entries(attempt.responseHeaders);
  const succeeded = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
  return (
    <article className="attempt" aria-label={props.title}>
      <h4>{props.title}</h4>
      <dl className="facts">
        {attempt.at ? (
          <>
            <dt>Sent</dt>
            <dd>
              <Time value={attempt.at} />
            </dd>
          </>
        ) : null}
        <dt>Status</dt>
        <dd>
          <span className={succeeded ? 'state state-active' : 'state state-revoked'}>{attempt.status === null ? 'No answer' : attempt.status}</span>
        </dd>
        <dt>Duration</dt>
        <dd>{attempt.durationMs} ms</dd>
        {attempt.error ? (
          <>
            <dt>Error</dt>
            <dd className="error">{attempt.error}</dd>
          </>
        ) : null}
      </dl>
      {headers.length > 0 ? (
        <details>
          <summary>Response headers ({headers.length})</summary>
          <dl className="headers">
            {headers.map(([name, value]) => (
              <div key={name}>
                <dt>{name}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
        </details>
      ) : null}
      <details open={attempt.responseBody !== ''}>
        <summary>Response body{attempt.responseBody === '' ? ' (empty)' : ''}</summary>
        {attempt.responseBody !== '' ? <pre className="response-body">{attempt.responseBody}</pre> : null}
      </details>
    </article>
  );
}
