import type { Delivery, Webhook, WebhookHealth } from '../../api-types.js';
import { formatTime } from '../../ui/dates.js';

/** A webhook's events in a few words: "All events" or the list. */
export function eventsText(webhook: Pick<Webhook, 'events'>): string {
  return webhook.events.includes('*') ? 'All events' : webhook.events.join(', ');
}

/** Whether it is on, and if not, who switched it off. */
export function stateText(webhook: Pick<Webhook, 'enabled' | 'disabledReason'>): string {
  if (webhook.enabled) return 'On';
  if (webhook.disabledReason === 'auto') return 'Off (switched off automatically)';
  return webhook.disabledReason === 'restored' ? 'Off (held after a restore)' : 'Off';
}

/** How an attempt ended, shortest: the status, or what went wrong without one. */
export function outcomeText(status: number | null, error: string | null): string {
  if (status !== null) return String(status);
  return error ?? 'no answer';
}

/** A time still to come, from now: "in 2 min", "in 40 s", "now". */
export function fromNow(iso: string, now = Date.now()): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (seconds <= 0) return 'now';
  if (seconds < 60) return `in ${seconds} s`;
  if (seconds < 3600) return `in ${Math.round(seconds / 60)} min`;
  return `in ${Math.round(seconds / 3600)} h`;
}

/**
 * What happens to a webhook's calls, in words: "Healthy", "Retrying: 3 failed, last 404, next in
 * 2 min", "Failing since …", "Off", "No calls yet". Not "On": a receiver that fails every call is
 * on too.
 */
export function healthText(webhook: Pick<Webhook, 'enabled' | 'disabledReason' | 'health'>, now = Date.now()): string {
  const { health } = webhook;
  switch (health.state) {
    case 'disabled':
      return stateText(webhook);
    case 'new':
      return 'No calls yet';
    case 'healthy':
      return 'Healthy';
    case 'failing':
      return `Failing since ${formatTime(health.failingSince)}`;
    case 'retrying': {
      const next = health.nextAttemptAt ? `, next ${fromNow(health.nextAttemptAt, now)}` : '';
      return `Retrying: ${health.failureStreak} failed, last ${outcomeText(health.lastStatus, health.lastError)}${next}`;
    }
  }
}

/** The badge's class for a health state: green when healthy, amber while retrying, red failing or off. */
export function healthClass(health: Pick<WebhookHealth, 'state'>): string {
  const classes: Record<WebhookHealth['state'], string> = {
    healthy: 'state state-succeeded',
    new: 'state state-held',
    retrying: 'state state-retrying',
    failing: 'state state-dead',
    disabled: 'state state-revoked',
  };
  return classes[health.state];
}

/**
 * A delivery's state in words: one that failed and waits for its next attempt is "Retrying (3
 * failed, last 404)", not "Pending"; "Pending" is one not attempted yet.
 */
export function deliveryStateText(delivery: Pick<Delivery, 'state' | 'attemptCount' | 'lastStatus' | 'lastError'>): string {
  if (delivery.state === 'succeeded') return 'Succeeded';
  if (delivery.state === 'dead') return `Dead (${delivery.attemptCount} failed, last ${outcomeText(delivery.lastStatus, delivery.lastError)})`;
  if (delivery.attemptCount === 0) return 'Pending';
  return `Retrying (${delivery.attemptCount} failed, last ${outcomeText(delivery.lastStatus, delivery.lastError)})`;
}

/** The badge's class for a delivery: amber retrying, never the plain "pending" look. */
export function deliveryStateClass(delivery: Pick<Delivery, 'state' | 'attemptCount'>): string {
  if (delivery.state === 'pending' && delivery.attemptCount > 0) return 'state state-retrying';
  return `state state-${delivery.state}`;
}
