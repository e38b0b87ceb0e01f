import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { Deps } from '../deps.js';
import type { AttemptResult, Outgoing, WebhookSender } from './send.js';
import type { GuardOptions } from './url-guard.js';

/** The URL rules as configured: http only in development, private targets only when allowed for tests. */
export function guardOptions(deps: Deps): GuardOptions {
  return { allowHttp: deps.config.env === 'development', allowPrivate: deps.config.webhookAllowPrivate, resolve: deps.resolveHost };
}

declare module '../services.js' {
  interface Services {
    /** The webhook sender: one connection pool for the app's sends and its worker's. */
    webhookSender: LazySender;
  }
}

/**
 * One sender (one connection pool) per running app and its worker, made at the first send: its
 * HTTP client (undici) is loaded only then, so a process that sends nothing does not hold it.
 * The URL rules are read from `deps` then, so a resolver a test wires in before sending counts.
 */
export class LazySender {
  private sender: Promise<WebhookSender> | null = null;

  constructor(private readonly deps: Deps) {}

  async send(outgoing: Outgoing): Promise<AttemptResult> {
    return (await this.loaded()).send(outgoing);
  }

  private loaded(): Promise<WebhookSender> {
    if (!this.sender) {
      const made = import('./send.js').then(({ WebhookSender }) => {
        const ca = this.deps.config.webhookCaFile ? [...rootCertificates, readFileSync(this.deps.config.webhookCaFile, 'utf8')] : undefined;
        return new WebhookSender(guardOptions(this.deps), { ca });
      });
      // A sender that could not be made is not kept: the next send tries again.
      made.catch(() => this.sender === made && (this.sender = null));
      this.sender = made;
    }
    return this.sender;
  }

  /** Closes the pool; a later send opens a new one. */
  async close(): Promise<void> {
    const sender = this.sender;
    this.sender = null;
    await (await sender?.catch(() => null))?.close();
  }
}

export const senderFor = (deps: Pick<Deps, 'services'>): { send(outgoing: Outgoing): Promise<AttemptResult> } => deps.services.webhookSender;

export const closeSender = (deps: Pick<Deps, 'services'>): Promise<void> => deps.services.webhookSender.close();
