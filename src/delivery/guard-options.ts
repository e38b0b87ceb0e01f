import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { Deps } from '../deps.js';
import { WebhookSender } from './send.js';
import type { GuardOptions } from './url-guard.js';

/** The URL rules as configured: http only in development, private targets only when allowed for tests. */
export function guardOptions(deps: Deps): GuardOptions {
  return { allowHttp: deps.config.env === 'development', allowPrivate: deps.config.webhookAllowPrivate, resolve: deps.resolveHost };
}

const senders = new WeakMap<Deps, WebhookSender>();

/** One sender (one connection pool) per running app, made on first use. */
export function senderFor(deps: Deps): WebhookSender {
  let sender = senders.get(deps);
  if (!sender) {
    const ca = deps.config.webhookCaFile ? [...rootCertificates, readFileSync(deps.config.webhookCaFile, 'utf8')] : undefined;
    sender = new WebhookSender(guardOptions(deps), { ca });
    senders.set(deps, sender);
  }
  return sender;
}

export async function closeSender(deps: Deps): Promise<void> {
  await senders.get(deps)?.close();
  senders.delete(deps);
}
