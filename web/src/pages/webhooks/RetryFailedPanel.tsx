import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import type { RetryFailedResult } from '../../api-types.js';

/** A `datetime-local` value (the person's local time, to the minute) for a moment. */
function localInput(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

const deliveries = (count: number) => `${count.toLocaleString()} failed ${count === 1 ? 'delivery' : 'deliveries'}`;

/**
 * "Retry all failed since …": counts first (a dry run, nothing sent), and only the second button
 * sends them again, each as a new delivery of its event, like a replay. `from` is where the time
 * starts (the webhook's failing streak, or a day ago).
 */
export function RetryFailedPanel(props: { webhookId: string; from: string | null; onRetried: () => void }): React.JSX.Element {
  const [since, setSince] = useState(() => localInput(props.from ? new Date(props.from) : new Date(Date.now() - 24 * 3600_000)));
  const [sinceError, setSinceError] = useState<string | undefined>(undefined);
  const retry = (dryRun: boolean) => (sinceIso: string) => api<RetryFailedResult>('POST', `/v1/webhooks/${props.webhookId}/retry-failed`, { since: sinceIso, dryRun });
  const count = useMutation({ mutationFn: retry(true) });
  const run = useMutation({ mutationFn: retry(false), onSuccess: () => props.onRetried() });
  const busy = count.isPending || run.isPending;

  const sinceInstant = (): string | undefined => {
    // A minute picked in the form means from its first second; now at the latest.
    const date = new Date(since);
    if (!since || Number.isNaN(date.getTime())) {
      setSinceError('Give a date and time.');
      return undefined;
    }
    setSinceError(undefined);
    return new Date(Math.min(date.getTime(), Date.now())).toISOString();
  };

  const counted = count.data;
  return (
    <section className="panel" aria-labelledby="retry-failed-title">
      <h2 id="retry-failed-title">Retry all failed since …</h2>
      <p className="hint">
        Deliveries that gave up after every attempt are sent again, each as a new delivery of the same event (the receiver sees the same{' '}
        <code>x-baas-delivery</code> id). One already sent again is left out. The count comes first; nothing is sent until you confirm.
      </p>
      <form
        aria-label="Retry all failed since"
        onSubmit={(event) => {
          event.preventDefault();
          const instant = sinceInstant();
          if (!instant) return;
          run.reset();
          count.mutate(instant);
        }}
      >
        <Field label="Failed since" hint="In your local time." error={sinceError}>
          <input
            type="datetime-local"
            value={since}
            required
            disabled={busy}
            onChange={(event) => {
              setSince(event.target.value);
              count.reset();
              run.reset();
            }}
          />
        </Field>
        <div className="actions">
          <button type="submit" disabled={busy} aria-busy={count.isPending}>
            {count.isPending ? 'Counting…' : 'Count failed deliveries'}
          </button>
        </div>
      </form>
      <div role="status">
        {counted && !run.data ? (
          <p>{counted.matched === 0 ? 'No failed delivery to send again since then.' : `${deliveries(counted.matched)} since then, not sent again yet.`}</p>
        ) : null}
        {run.data ? (
          <p className="notice">
            {`${deliveries(run.data.retried)} queued again.`}
            {run.data.retried < run.data.matched ? ` ${(run.data.matched - run.data.retried).toLocaleString()} more are left: retry again for the next ones.` : ''}
          </p>
        ) : null}
      </div>
      {counted && counted.matched > 0 && !run.data ? (
        <div className="actions">
          <button type="button" className="primary" disabled={busy} aria-busy={run.isPending} onClick={() => run.mutate(sinceInstant() ?? '')}>
            {run.isPending ? 'Retrying…' : `Retry ${deliveries(counted.matched)}`}
          </button>
          <button type="button" disabled={busy} onClick={() => count.reset()}>
            Cancel
          </button>
        </div>
      ) : null}
      <ErrorText error={run.error ?? count.error} />
    </section>
  );
}
