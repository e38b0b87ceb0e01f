import type { Webhook } from '../../api-types.js';

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
