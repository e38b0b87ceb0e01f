import { useState } from 'react';
import { EVENT_TYPES } from '../../../../src/modules/events/event-types.js';
import { api, withCursor, type Page } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { Pager } from '../../ui/Pager.js';
import { Time } from '../../ui/Time.js';
import { usePagedQuery } from '../../query/usePagedQuery.js';
import { DeliveryDetail } from './DeliveryDetail.js';
import type { Delivery } from '../../api-types.js';
import { deliveryStateClass, deliveryStateText } from './webhook-words.js';

const STATES: { value: '' | Delivery['state']; label: string }[] = [
  { value: '', label: 'Any state' },
  { value: 'pending', label: 'Pending (waiting or retrying)' },
  { value: 'succeeded', label: 'Succeeded' },
  { value: 'dead', label: 'Dead (gave up after 8 attempts)' },
];


/** The delivery log, newest first (kept 30 days): filters by state and event, paging, each delivery's attempts, replay. */
export function DeliveryLog(props: { webhookId: string }): React.JSX.Element {
  const [state, setState] = useState<'' | Delivery['state']>('');
  const [eventType, setEventType] = useState('');
  const [open, setOpen] = useState<string | null>(null);

  const query = new URLSearchParams({ limit: '20' });
  if (state) query.set('state', state);
  if (eventType) query.set('eventType', eventType);
  const base = `/v1/webhooks/${props.webhookId}/deliveries?${query}`;
  const log = usePagedQuery<Delivery>([base], (cursor, signal) => api<Page<Delivery>>('GET', withCursor(base, cursor), undefined, signal));

  return (
    <section className="panel" aria-labelledby="log-title">
      <h2 id="log-title">Delivery log</h2>
      <div className="filters">
        <Field label="State">
          <select value={state} onChange={(event) => setState(event.target.value as typeof state)}>
            {STATES.map((choice) => (
              <option key={choice.value} value={choice.value}>
                {choice.label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Event">
          <select value={eventType} onChange={(event) => setEventType(event.target.value)}>
            <option value="">Any event</option>
            {EVENT_TYPES.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </Field>
        <button type="button" onClick={() => void log.reload()} disabled={log.loading} aria-busy={log.loading}>
          Refresh
        </button>
      </div>

      <ErrorText error={log.error} />
      {log.loading && log.items.length === 0 ? <p role="status">Loading deliveries…</p> : null}
      {!log.loading && !log.error && log.items.length === 0 ? (
        <p className="empty">{state || eventType ? 'No delivery matches these filters.' : 'No deliveries yet. They appear here when something the webhook listens to changes.'}</p>
      ) : null}
      {log.items.length > 0 ? (
        <ul className="delivery-list" aria-label="Deliveries, newest first">
          {log.items.map((delivery) => (
            <li key={delivery.id} className="delivery">
              <div className="delivery-summary">
                <div>
                  <code className="delivery-event">{delivery.eventType}</code>{' '}
                  {delivery.held ? (
                    <span className="state state-held" title="Kept while the webhook is off; sent when it is enabled again">
                      Held
                    </span>
                  ) : (
                    <span className={deliveryStateClass(delivery)}>{deliveryStateText(delivery)}</span>
                  )}
                  <div className="hint">
                    {delivery.attemptCount} attempt{delivery.attemptCount === 1 ? '' : 's'} · created{' '}
                    <Time value={delivery.createdAt} />
                    {delivery.nextAttemptAt ? (
                      <>
                        {' '}
                        · next attempt <Time value={delivery.nextAttemptAt} />
                      </>
                    ) : null}{' '}
                    · event <code>{delivery.eventId}</code>
                  </div>
                </div>
                <button
                  type="button"
                  aria-expanded={open === delivery.id}
                  aria-controls={`delivery-${delivery.id}`}
                  aria-label={`${open === delivery.id ? 'Hide' : 'Show'} attempts of ${delivery.eventType} ${delivery.id}`}
                  onClick={() => setOpen(open === delivery.id ? null : delivery.id)}
                >
                  {open === delivery.id ? 'Hide attempts' : 'Show attempts'}
                </button>
              </div>
              {open === delivery.id ? (
                <div id={`delivery-${delivery.id}`}>
                  <DeliveryDetail webhookId={props.webhookId} deliveryId={delivery.id} onReplayed={() => void log.reload()} />
                </div>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      <Pager hasMore={log.hasMore} onMore={() => void log.more()} loading={log.loading} />
    </section>
  );
}
