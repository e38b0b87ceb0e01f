import { useState } from 'react';
import { api } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { useForm } from '../../ui/Form.js';
import { AttemptDetails } from './AttemptDetails.js';
import type { PingResult } from '../../api-types.js';

/** Sends a `webhook.ping` now and shows how the receiver answered (a ping is not retried or logged). */
export function PingPanel(props: { webhookId: string }): React.JSX.Element {
  const [result, setResult] = useState<PingResult | null>(null);
  // One button and a result with its details, not a panel of fields: the shared form's state alone.
  const ping = useForm(async () => {
    setResult(null);
    setResult(await api<PingResult>('POST', `/v1/webhooks/${props.webhookId}/ping`));
  });

  return (
    <section className="panel" aria-labelledby="ping-title">
      <h2 id="ping-title">Test call</h2>
      <p className="hint">Sends a signed <code>webhook.ping</code> to the receiver now (it can take up to 10 seconds) and shows its answer.</p>
      <div className="actions">
        <button type="button" onClick={() => void ping.send()} disabled={ping.busy} aria-busy={ping.busy}>
          {ping.busy ? 'Sending ping…' : 'Send ping'}
        </button>
      </div>
      <div role="status">
        {ping.busy ? <p>Waiting for the receiver…</p> : null}
        {result ? (
          <p className={result.ok ? 'notice' : 'error'}>
            {result.ok ? `The receiver answered ${result.status}: the ping succeeded.` : 'The ping failed: the receiver did not acknowledge it with a 2xx.'}
          </p>
        ) : null}
      </div>
      {result ? <AttemptDetails attempt={result} title="Ping result" /> : null}
      <ErrorText error={ping.error} />
    </section>
  );
}
