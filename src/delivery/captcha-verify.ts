import type { Deps } from '../deps.js';
import { guardOptions } from './guard-options.js';
import type { GuardedPoster } from './guarded-post.js';

/**
 * Verifies a CAPTCHA token with its provider (docs/forms.md): Cloudflare Turnstile and
 * hCaptcha both take a form-encoded POST of `secret`, `response` (the token) and `remoteip`, and
 * answer JSON `{success: boolean, "error-codes": [...], ...}`. Only `success: true` passes. The
 * check fails closed: a provider that cannot be reached, is not allowed by the outbound rules,
 * answers late, answers something else than that JSON, or too much of it, refuses the submission.
 * The secret goes into the request body only: never into a verdict, an error or a log line.
 */
export type CaptchaProvider = 'turnstile' | 'hcaptcha';

export interface CaptchaCheck {
  provider: CaptchaProvider;
  secret: string;
  /** The token the widget put in the form; missing or empty fails without a call. */
  token: string | null | undefined;
  /** The client's address, which the provider may weigh. */
  remoteIp?: string | null;
}

export type CaptchaVerdict =
  | { ok: true }
  | {
      ok: false;
      /** missing: no token sent; rejected: the provider said no; unavailable: no usable answer. */
      reason: 'missing' | 'rejected' | 'unavailable';
      /** For the log: what went wrong, without the secret or the token. */
      detail: string;
    };

/** Most bytes of a provider's answer read: theirs are a few hundred. More is not their answer. */
export const CAPTCHA_ANSWER_LIMIT = 8 * 1024;

/** Longest token sent on: the providers' are about 2 KB at most (the create route's schema says the same). */
export const CAPTCHA_TOKEN_MAX_LENGTH = 4096;

export async function verifyCaptcha(deps: Pick<Deps, 'config' | 'services'>, check: CaptchaCheck): Promise<CaptchaVerdict> {
  const token = check.token ?? '';
  if (token === '') return { ok: false, reason: 'missing', detail: 'no CAPTCHA token in the submission' };
  if (token.length > CAPTCHA_TOKEN_MAX_LENGTH) return { ok: false, reason: 'rejected', detail: 'the CAPTCHA token is longer than any provider issues' };
  const form = new URLSearchParams({ secret: check.secret, response: token });
  if (check.remoteIp) form.set('remoteip', check.remoteIp);
  const url = deps.config.captchaVerifyUrls[check.provider];
  let answer;
  try {
    answer = await (await deps.services.captchaClient.poster()).postForm(url, form, {
      timeoutMs: deps.config.captchaTimeoutMs,
      limit: CAPTCHA_ANSWER_LIMIT,
      userAgent: 'Plainbase-Captcha/1',
    });
  } catch (error) {
    const kind = (error as { kind?: string }).kind;
    if (kind === undefined) throw error;
    return unavailable(`${check.provider} verification ${kind === 'blocked' ? 'endpoint is not an allowed destination' : `failed: ${(error as Error).message}`}`);
  }
  if (answer.cut) return unavailable(`${check.provider} answered more than ${CAPTCHA_ANSWER_LIMIT} bytes`);
  if (answer.status < 200 || answer.status > 299) return unavailable(`${check.provider} answered HTTP ${answer.status}`);
  const parsed = parseAnswer(answer.bytes);
  if (parsed === null) return unavailable(`${check.provider} answered something other than its JSON`);
  if (parsed.success) return { ok: true };
  return { ok: false, reason: 'rejected', detail: `${check.provider} refused the token${parsed.errorCodes.length ? ` (${parsed.errorCodes.join(', ')})` : ''}` };
}

const unavailable = (detail: string): CaptchaVerdict => ({ ok: false, reason: 'unavailable', detail });

/** `{success: boolean, "error-codes"?: string[]}`, or null for anything else. */
function parseAnswer(bytes: Buffer): { success: boolean; errorCodes: string[] } | null {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const success = Object.hasOwn(value, 'success') ? (value as { success: unknown }).success : undefined;
  if (typeof success !== 'boolean') return null;
  const codes = Object.hasOwn(value, 'error-codes') ? (value as { 'error-codes': unknown })['error-codes'] : [];
  // The provider's codes are short words (invalid-input-response, timeout-or-duplicate); anything else is left out of the log.
  const errorCodes = Array.isArray(codes) ? codes.filter((code): code is string => typeof code === 'string' && /^[\w-]{1,64}$/.test(code)).slice(0, 5) : [];
  return { success, errorCodes };
}

declare module '../services.js' {
  interface Services {
    /** The CAPTCHA verifier's connection pool, made at the first verification. */
    captchaClient: LazyCaptchaClient;
  }
}

/**
 * One connection pool for every verification of an app, made at the first: its HTTP client is
 * loaded only then. The outbound rules are read from `deps` at that moment, as the webhook
 * sender's are, so a resolver a test wires in first counts.
 */
export class LazyCaptchaClient {
  private loaded: Promise<GuardedPoster> | null = null;

  constructor(private readonly deps: Deps) {}

  poster(): Promise<GuardedPoster> {
    if (!this.loaded) {
      const made = import('./guarded-post.js').then(({ GuardedPoster }) => new GuardedPoster(guardOptions(this.deps), this.deps.config.captchaTimeoutMs));
      made.catch(() => this.loaded === made && (this.loaded = null));
      this.loaded = made;
    }
    return this.loaded;
  }

  async close(): Promise<void> {
    const loaded = this.loaded;
    this.loaded = null;
    await (await loaded?.catch(() => null))?.close();
  }
}
