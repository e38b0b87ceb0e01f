import { useState } from 'react';
import { api } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { AttemptDetails } from './AttemptDetails.js';
import type { PingResult } from '../../api-types.js';

/** Sends a `webhook.ping` now and shows how the receiver answered (a ping is not retried or logged). */
export function PingPanel(props: { webhookId: string }): React.JSX.Element {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<PingResult | null>(null);
  const [error, setError] = useState<unknown>(null);

  const ping = async () => {
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult(await api<PingResult>('POST', `/v1/webhooks/${props.webhookId}/ping`));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="panel" aria-labelledby="ping-title">
      <h2 id="ping-title">Test call</h2>
      <p className="hint">Sends a signed <code>webhook.ping</code> to the receiver now (it can take up to 10 seconds) and shows its answer.</p>
      <div className="actions">
        <button type="button" onClick={() => void ping()} disabled={busy} aria-busy={busy}>
          {busy ? 'Sending ping…' : 'Send ping'}
        </button>
      </div>
      <div role="status">
        {busy ? <p>Waiting for the receiver…</p> : null}
        {result ? (
          <p className={result.ok ? 'notice' : 'error'}>
            {result.ok ? `The receiver answered ${result.status}: the ping succeeded.` : 'The ping failed: the receiver did not acknowledge it with a 2xx.'}
          </p>
        ) : null}
      </div>
      {result ? <AttemptDetails attempt={result} title="Ping result" /> : null}
      <ErrorText error={error} />
    </section>
  );
}
