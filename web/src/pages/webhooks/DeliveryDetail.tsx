import { api } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { useForm } from '../../ui/Form.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { AttemptDetails } from './AttemptDetails.js';
import type { Delivery, DeliveryWithAttempts } from '../../api-types.js';

/**
 * One delivery: the body it sends, its attempts (newest last), and Replay: a finished delivery is
 * sent again as a new one; one waiting for a retry has the retry brought forward.
 */
export function DeliveryDetail(props: { webhookId: string; deliveryId: string; onReplayed: (replay: Delivery) => void }): React.JSX.Element {
  const path = `/v1/webhooks/${props.webhookId}/deliveries/${props.deliveryId}`;
  const delivery = useApiQuery([path], (signal) => api<DeliveryWithAttempts>('GET', path, undefined, signal));
  const replay = useForm(async () => {
    const replayed = await api<Delivery>('POST', `${path}/replay`);
    props.onReplayed(replayed);
    return replayed.id === props.deliveryId
      ? 'Its next attempt is brought forward to now (it was still waiting, so it is not sent twice).'
      : `Sent again as a new delivery (${replayed.id}); the receiver sees the same x-baas-delivery id.`;
  });

  const attempts = delivery.data?.attempts ?? [];
  return (
    <div className="delivery-detail">
      <ErrorText error={delivery.error} />
      {delivery.loading && !delivery.data ? <p role="status">Loading attempts…</p> : null}
      {delivery.data ? (
        <details className="delivery-body">
          <summary>Body sent</summary>
          <pre>{prettyBody(delivery.data.body)}</pre>
        </details>
      ) : null}
      {delivery.data && attempts.length === 0 ? (
        <p className="empty">{delivery.data.held ? 'No attempt yet: held until the webhook is enabled.' : 'No attempt yet: it is waiting to be sent.'}</p>
      ) : null}
      {attempts.map((attempt, index) => (
        <AttemptDetails key={attempt.id} attempt={attempt} title={`Attempt ${index + 1}`} />
      ))}
      <div className="actions">
        <button type="button" onClick={() => void delivery.reload()} disabled={delivery.loading}>
          Refresh attempts
        </button>
        <button type="button" onClick={() => void replay.send()} disabled={replay.busy} aria-busy={replay.busy}>
          {replay.busy ? 'Replaying…' : 'Replay'}
        </button>
      </div>
      <p role="status" className="hint">
        {replay.notice}
      </p>
      <ErrorText error={replay.error} />
    </div>
  );
}

/** The body as sent is one line of JSON; shown indented (the bytes signed are the ones sent). */
function prettyBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}
