/** What the /v1/webhooks routes answer (docs/webhooks.md). */
export interface Webhook {
  id: string;
  url: string;
  events: string[];
  collections: string[] | null;
  enabled: boolean;
  disabledReason: 'auto' | 'manual' | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookWithSecret extends Webhook {
  secret: string;
}

/** What the webhook may be told to listen to, as the API takes it on create and change. */
export interface WebhookInput {
  url: string;
  events: string[];
  collections: string[] | null;
}

export interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  webhookId: string;
  state: 'pending' | 'succeeded' | 'dead';
  /** Pending while the webhook is off: kept, and sent once it is enabled again. */
  held: boolean;
  attemptCount: number;
  nextAttemptAt: string | null;
  createdAt: string;
}

/** One call to the receiver and how it answered; a ping's result has the same shape without id and time. */
export interface AttemptResult {
  status: number | null;
  durationMs: number;
  responseHeaders: Record<string, string>;
  responseBody: string;
  error: string | null;
}

export interface Attempt extends AttemptResult {
  id: string;
  at: string;
}

export interface DeliveryWithAttempts extends Delivery {
  /** The exact bytes every attempt sent and signed: the event message. */
  body: string;
  attempts: Attempt[];
}

export interface PingResult extends AttemptResult {
  ok: boolean;
}

/** The events value that means every event, also those added in later versions. */
export const ALL_EVENTS = '*';
