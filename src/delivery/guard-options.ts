import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { Deps } from '../deps.js';
import type { AttemptResult, Outgoing, WebhookSender } from './send.js';
import type { GuardOptions } from './url-guard.js';

/** The URL rules as configured: http only in development, private targets only when allowed for tests. */
export function guardOptions(deps: Deps): GuardOptions {
  return { allowHttp: deps.config.env === 'development', allowPrivate: deps.config.webhookAllowPrivate, resolve: deps.resolveHost };
}

const senders = new WeakMap<Deps, Promise<WebhookSender>>();

/**
 * One sender (one connection pool) per running app, made at the first send: its HTTP client
 * (undici) is loaded only then, so a process that sends nothing does not hold it.
 */
export function senderFor(deps: Deps): { send(outgoing: Outgoing): Promise<AttemptResult> } {
  return { send: async (outgoing) => (await loadedSender(deps)).send(outgoing) };
}

function loadedSender(deps: Deps): Promise<WebhookSender> {
  let sender = senders.get(deps);
  if (!sender) {
    const made = import('./send.js').then(({ WebhookSender }) => {
      const ca = deps.config.webhookCaFile ? [...rootCertificates, readFileSync(deps.config.webhookCaFile, 'utf8')] : undefined;
      return new WebhookSender(guardOptions(deps), { ca });
    });
    // A sender that could not be made is not kept: the next send tries again.
    made.catch(() => senders.get(deps) === made && senders.delete(deps));
    senders.set(deps, made);
    sender = made;
  }
  return sender;
}

export async function closeSender(deps: Deps): Promise<void> {
  const sender = senders.get(deps);
  senders.delete(deps);
  await (await sender?.catch(() => null))?.close();
}
