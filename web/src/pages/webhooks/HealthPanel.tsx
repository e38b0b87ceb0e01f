import { api } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Time } from '../../ui/Time.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import type { Webhook, WebhookHealthHours } from '../../api-types.js';
import { HealthChart } from './HealthChart.js';
import { healthClass, healthText, outcomeText } from './webhook-words.js';

/** How often the health is read again while the page is open: retries happen on their own. */
const REFRESH_MS = 15_000;

/** A webhook's health: what happens to its calls in words, the last attempt, the failure streak, and 24 hours of attempts. */
export function HealthPanel(props: { webhook: Webhook }): React.JSX.Element {
  const { webhook } = props;
  const path = `/v1/webhooks/${webhook.id}/health`;
  const loaded = useApiQuery([path], (signal) => api<WebhookHealthHours>('GET', path, undefined, signal), { refreshEveryMs: REFRESH_MS });
  const health = loaded.data ?? webhook.health;
  return (
    <section className="panel" aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      <p>
        <span className={healthClass(health)}>{healthText({ ...webhook, health })}</span>
      </p>
      <dl className="facts">
        <dt>Last attempt</dt>
        <dd>
          {health.lastAttemptAt ? (
            <>
              {outcomeText(health.lastStatus, health.lastError)} at <Time value={health.lastAttemptAt} />
            </>
          ) : (
            'None yet'
          )}
        </dd>
        <dt>Failure streak</dt>
        <dd>
          {health.failureStreak === 0 ? (
            'None'
          ) : (
            <>
              {health.failureStreak} failed {health.failureStreak === 1 ? 'attempt' : 'attempts'} in a row, since <Time value={health.failingSince!} />
            </>
          )}
        </dd>
        <dt>Waiting to retry</dt>
        <dd>
          {health.waitingRetries === 0 ? (
            'Nothing'
          ) : (
            <>
              {health.waitingRetries} {health.waitingRetries === 1 ? 'delivery' : 'deliveries'}
              {health.nextAttemptAt ? (
                <>
                  , next attempt <Time value={health.nextAttemptAt} />
                </>
              ) : null}
            </>
          )}
        </dd>
      </dl>
      {loaded.data ? <HealthChart hours={loaded.data.hours} /> : null}
      <ErrorText error={loaded.error} />
    </section>
  );
}
