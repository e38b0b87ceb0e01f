import { invalidRequest } from '../../errors.js';
import { browserOrigin } from '../../origin-list.js';

/**
 * A collection's public submissions (`settings.submissions`, docs/data-api.md): whether anyone
 * may add a record without a credential, from which web pages, how often, and with which traps.
 * The CAPTCHA secret is kept in the stored settings and never shown: answers, events and audit
 * entries see `captcha: {provider}` only (publicSubmissions).
 */
export const CAPTCHA_PROVIDERS = ['turnstile', 'hcaptcha'] as const;
export type CaptchaProvider = (typeof CAPTCHA_PROVIDERS)[number];

export interface StoredSubmissions {
  enabled: boolean;
  origins: string[];
  ratePerMinute?: number;
  honeypot?: string;
  captcha?: { provider: CaptchaProvider; secret: string };
}

/** What answers show: the same without the secret. */
export type PublicSubmissions = Omit<StoredSubmissions, 'captcha'> & { captcha?: { provider: CaptchaProvider } };

/** What a create or an update sends (the route's schema has checked its shape already). */
export interface SubmissionsInput {
  enabled: boolean;
  origins?: string[];
  ratePerMinute?: number;
  honeypot?: string;
  /** Absent: keep the stored one; null: remove it; without secret: keep the stored secret of the same provider. */
  captcha?: { provider: CaptchaProvider; secret?: string } | null;
}

export const MAX_ORIGINS = 100;

/** Field names a honeypot may not take: they would reach an object's prototype rather than its data. */
const FORBIDDEN_FIELD_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * An origin as browsers send it in the Origin header: scheme, host and port only, lower case,
 * the default port left out. `*` stands for any origin. Anything else (a path, a query, a
 * trailing slash, credentials, another scheme) is refused, so a typo is a clear 400 rather
 * than a list that silently never matches.
 */
export function normalOrigin(text: string, field: string): string {
  if (text === '*') return text;
  // Written as the browser sends it: no default port, no trailing slash, a host name in ASCII.
  const origin = browserOrigin(text);
  if (origin === null) {
    throw invalidRequest(`${field} must be an origin like https://example.com (scheme, host and port only, no path or trailing slash), or *; ${JSON.stringify(text.slice(0, 200))} is not one.`, { field });
  }
  return origin;
}

/** The stored submissions of a collection's stored settings, or null (off) when there are none or they do not read as such. */
export function storedSubmissions(settings: Record<string, unknown>): StoredSubmissions | null {
  const value = Object.hasOwn(settings, 'submissions') ? settings.submissions : undefined;
  if (typeof value !== 'object' || value === null) return null;
  return value as StoredSubmissions;
}

export function publicSubmissions(stored: StoredSubmissions): PublicSubmissions {
  const { captcha, ...rest } = stored;
  return captcha ? { ...rest, captcha: { provider: captcha.provider } } : rest;
}

/**
 * The submissions to store from what a create or an update sent and what was stored before.
 * The secret is write-only, so a client that sends back what it read (`captcha: {provider}`)
 * keeps it; naming another provider without a secret is refused.
 */
export function submissionsToStore(input: SubmissionsInput, before: StoredSubmissions | null): StoredSubmissions {
  const origins = [...new Set((input.origins ?? []).map((origin, index) => normalOrigin(origin, `body.settings.submissions.origins.${index}`)))];
  if (input.honeypot !== undefined && FORBIDDEN_FIELD_NAMES.has(input.honeypot)) {
    throw invalidRequest(`body.settings.submissions.honeypot cannot be ${input.honeypot}.`, { field: 'body.settings.submissions.honeypot' });
  }
  const stored: StoredSubmissions = { enabled: input.enabled, origins };
  if (input.ratePerMinute !== undefined) stored.ratePerMinute = input.ratePerMinute;
  if (input.honeypot !== undefined) stored.honeypot = input.honeypot;
  const captcha = input.captcha === undefined ? before?.captcha : input.captcha;
  if (captcha) {
    const secret = captcha.secret ?? (before?.captcha?.provider === captcha.provider ? before.captcha.secret : undefined);
    if (secret === undefined) {
      throw invalidRequest(`body.settings.submissions.captcha.secret is required: no ${captcha.provider} secret is stored for this collection.`, { field: 'body.settings.submissions.captcha.secret' });
    }
    stored.captcha = { provider: captcha.provider, secret };
  }
  return stored;
}
