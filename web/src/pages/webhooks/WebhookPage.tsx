import '../keys/keys-and-webhooks.css';
import { useState } from 'react';
import { api, loadAll } from '../../api.js';
import { Link, navigate, useRoute, useTitle } from '../../router.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { useForm } from '../../ui/Form.js';
import { Time } from '../../ui/Time.js';
import { useQueryClient } from '@tanstack/react-query';
import { useApiQuery, useWorkspaceKey } from '../../query/useApiQuery.js';
import type { CollectionRef } from '../../api-types.js';
import { RevealedSecret } from '../keys/RevealedSecret.js';
import { DeliveryLog } from './DeliveryLog.js';
import { HealthPanel } from './HealthPanel.js';
import { PingPanel } from './PingPanel.js';
import { RetryFailedPanel } from './RetryFailedPanel.js';
import type { Webhook, WebhookWithSecret } from '../../api-types.js';
import { eventsText, healthClass, healthText, stateText } from './webhook-words.js';
import { WebhookForm } from './WebhookForm.js';

/** One webhook: its settings, on/off, its health, the signing secret, a test call, retrying what failed, and the delivery log. */
export function WebhookPage(): React.JSX.Element {
  useTitle('Webhook');
  const id = useRoute().params.id ?? '';
  const loaded = useApiQuery([`/v1/webhooks/${encodeURIComponent(id)}`, 'with collections'], async (signal) => {
    const [webhook, collections] = await Promise.all([
      api<Webhook>('GET', `/v1/webhooks/${encodeURIComponent(id)}`, undefined, signal),
      loadAll<CollectionRef>('/v1/collections', signal),
    ]);
    return { webhook, collections };
  });
  // After a retry the page's health, chart and log are all out of date: everything of this workspace is read again.
  const queryClient = useQueryClient();
  const workspaceKey = useWorkspaceKey([]);
  const [editing, setEditing] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<'rotate' | 'delete' | null>(null);
  // Enable or Disable: whichever the webhook's state, as last read, offers.
  const switching = useForm(async () => {
    const current = loaded.data?.webhook;
    if (!current) return;
    await api('POST', `/v1/webhooks/${current.id}/${current.enabled ? 'disable' : 'enable'}`);
    await loaded.reload();
  });

  if (!loaded.data) {
    return (
      <section>
        <p>
          <Link to="/webhooks">← Webhooks</Link>
        </p>
        <h1>Webhook</h1>
        {loaded.loading ? <p role="status">Loading…</p> : null}
        <ErrorText error={loaded.error} />
      </section>
    );
  }

  const { webhook, collections } = loaded.data;
  const collectionName = (collectionId: string) => collections.find((collection) => collection.id === collectionId)?.name ?? collectionId;

  return (
    <section>
      <p>
        <Link to="/webhooks">← Webhooks</Link>
      </p>
      <h1>
        Webhook <code className="break">{webhook.url}</code>
      </h1>

      {webhook.disabledReason === 'auto' ? (
        <div className="banner banner-danger" role="alert">
          <strong>This webhook was switched off automatically</strong> after 25 deliveries in a row failed every attempt. Nothing is lost: the deliveries
          that were waiting, and every event since, are held (marked Held in the log below, kept up to 30 days). Fix the receiver, send a ping to check
          it, then enable the webhook: everything held is sent.
        </div>
      ) : null}
      {webhook.disabledReason === 'restored' ? (
        <div className="banner" role="note">
          This webhook was switched off by a restore from a backup, so that nothing is sent to its receiver before you say so. Its deliveries are held
          (marked Held in the log below, kept up to 30 days) and are all sent when you enable it.
        </div>
      ) : null}
      {webhook.disabledReason === 'manual' ? (
        <div className="banner" role="note">
          This webhook is switched off. Events it listens to are still recorded as held deliveries (marked Held in the log below, kept up to 30 days)
          and are all sent when it is enabled again.
        </div>
      ) : null}

      <section className="panel" aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        <dl className="facts">
          <dt>State</dt>
          <dd>
            <span className={webhook.enabled ? 'state state-active' : 'state state-revoked'}>{stateText(webhook)}</span>{' '}
            <span className={healthClass(webhook.health)}>{healthText(webhook)}</span>
          </dd>
          <dt>Events</dt>
          <dd>{eventsText(webhook)}</dd>
          <dt>Collections</dt>
          <dd>{webhook.collections ? webhook.collections.map(collectionName).join(', ') : 'All'}</dd>
          <dt>Created</dt>
          <dd><Time value={webhook.createdAt} /></dd>
          <dt>Id</dt>
          <dd>
            <code>{webhook.id}</code>
          </dd>
        </dl>
        <div className="actions">
          {webhook.enabled ? (
            <button type="button" onClick={() => void switching.send()} disabled={switching.busy} aria-busy={switching.busy}>
              {switching.busy ? 'Disabling…' : 'Disable'}
            </button>
          ) : (
            <button type="button" className="primary" onClick={() => void switching.send()} disabled={switching.busy} aria-busy={switching.busy}>
              {switching.busy ? 'Enabling…' : 'Enable'}
            </button>
          )}
          <button type="button" onClick={() => setEditing(true)} disabled={editing}>
            Edit
          </button>
          <button type="button" onClick={() => setConfirm('rotate')}>
            Rotate secret
          </button>
          <button type="button" className="quiet-danger" onClick={() => setConfirm('delete')}>
            Delete
          </button>
        </div>
        <ErrorText error={switching.error} />
      </section>

      {secret ? <RevealedSecret title="New signing secret" label="Signing secret" secret={secret} onDone={() => setSecret(null)} /> : null}

      {editing ? (
        <WebhookForm
          title="Change webhook"
          submitLabel="Save changes"
          initial={webhook}
          collections={collections}
          submit={async (input) => {
            await api<Webhook>('PATCH', `/v1/webhooks/${webhook.id}`, input);
            setEditing(false);
            await loaded.reload();
          }}
          onCancel={() => setEditing(false)}
        />
      ) : null}

      <HealthPanel webhook={webhook} />
      <PingPanel webhookId={webhook.id} />
      <RetryFailedPanel webhookId={webhook.id} from={webhook.health.failingSince} onRetried={() => void queryClient.invalidateQueries({ queryKey: workspaceKey })} />
      <DeliveryLog webhookId={webhook.id} />

      <ConfirmDialog
        open={confirm === 'rotate'}
        title="Rotate the signing secret?"
        confirmLabel="Rotate secret"
        danger
        message={
          <p>
            The current secret stops at once: from the next attempt on, calls are signed with the new one, and your receiver refuses them until you deploy it.
            Failed deliveries can be replayed afterwards.
          </p>
        }
        onConfirm={async () => {
          const rotated = await api<WebhookWithSecret>('POST', `/v1/webhooks/${webhook.id}/rotate-secret`);
          setConfirm(null);
          setSecret(rotated.secret);
        }}
        onCancel={() => setConfirm(null)}
      />
      <ConfirmDialog
        open={confirm === 'delete'}
        title="Delete this webhook?"
        confirmLabel="Delete webhook"
        danger
        message={
          <p>
            <code>{webhook.url}</code> stops receiving calls, and its delivery log (every delivery and attempt) is deleted with it. This cannot be undone.
          </p>
        }
        onConfirm={async () => {
          await api('DELETE', `/v1/webhooks/${webhook.id}`);
          setConfirm(null);
          navigate('/webhooks');
        }}
        onCancel={() => setConfirm(null)}
      />
    </section>
  );
}
