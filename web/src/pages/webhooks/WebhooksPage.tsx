import '../keys/keys-and-webhooks.css';
import { useState } from 'react';
import { api, loadAll } from '../../api.js';
import { Link, useTitle } from '../../router.js';
import { DataTable } from '../../ui/DataTable.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Time } from '../../ui/Time.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import type { CollectionRef } from '../../api-types.js';
import { RevealedSecret } from '../keys/RevealedSecret.js';
import type { Webhook, WebhookWithSecret } from '../../api-types.js';
import { eventsText, healthClass, healthText } from './webhook-words.js';
import { WebhookForm } from './WebhookForm.js';
import { newestFirst } from '../../ui/newest-first.js';

/** Webhooks of the workspace: the list, and registering a new receiver (its signing secret shown once). */
export function WebhooksPage(): React.JSX.Element {
  useTitle('Webhooks');
  const loaded = useApiQuery(['/v1/webhooks', 'with collections'], async (signal) => {
    const [webhooks, collections] = await Promise.all([
      loadAll<Webhook>('/v1/webhooks', signal).then((webhooks) => newestFirst(webhooks, (webhook) => webhook.createdAt)),
      loadAll<CollectionRef>('/v1/collections', signal),
    ]);
    return { webhooks, collections };
  });
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<WebhookWithSecret | null>(null);

  const collectionName = (id: string) => loaded.data?.collections.find((collection) => collection.id === id)?.name ?? id;
  const collectionsText = (webhook: Webhook) => (webhook.collections ? webhook.collections.map(collectionName).join(', ') : 'All');
  const webhooks = loaded.data?.webhooks ?? [];

  return (
    <section>
      <div className="page-head">
        <h1>Webhooks</h1>
        {!creating && !created ? (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            Create webhook
          </button>
        ) : null}
      </div>
      <p className="lead">A webhook calls your server, signed, each time something changes here; failed calls are retried and every call is logged.</p>

      {created ? (
        <RevealedSecret
          title="Webhook created"
          label="Signing secret"
          secret={created.secret}
          usage={
            <p className="hint">
              Your receiver checks the <code>x-baas-signature</code> header with this secret (see the webhooks documentation).{' '}
              <Link to={`/webhooks/${created.id}`}>Open the webhook</Link> to send a ping and read its delivery log.
            </p>
          }
          onDone={() => setCreated(null)}
        />
      ) : null}

      {creating ? (
        <WebhookForm
          title="New webhook"
          submitLabel="Create webhook"
          collections={loaded.data?.collections ?? []}
          submit={async (input) => {
            const webhook = await api<WebhookWithSecret>('POST', '/v1/webhooks', {
              url: input.url,
              events: input.events,
              ...(input.collections ? { collections: input.collections } : {}),
            });
            setCreating(false);
            setCreated(webhook);
            await loaded.reload();
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}

      <ErrorText error={loaded.error} />
      {loaded.loading && !loaded.data ? <p role="status">Loading webhooks…</p> : null}
      {loaded.data && webhooks.length === 0 ? <p className="empty">No webhooks yet.</p> : null}
      {webhooks.length > 0 ? (
        <DataTable<Webhook>
          caption="Webhooks"
          rows={webhooks}
          rowKey={(webhook) => webhook.id}
          columns={[
            {
              id: 'url',
              label: 'Receiver',
              fixed: true,
              cell: (webhook) => <Link to={`/webhooks/${webhook.id}`}>{webhook.url}</Link>,
              title: (webhook) => webhook.url,
            },
            { id: 'events', label: 'Events', cell: eventsText, title: eventsText },
            { id: 'collections', label: 'Collections', cell: collectionsText, title: collectionsText },
            { id: 'state', label: 'State', cell: (webhook) => <span className={healthClass(webhook.health)}>{healthText(webhook)}</span>, title: healthText },
            { id: 'createdAt', label: 'Created', cell: (webhook) => <Time value={webhook.createdAt} /> },
          ]}
        />
      ) : null}
    </section>
  );
}
