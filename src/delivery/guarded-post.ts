import { Agent, request } from 'undici';
import { checkedLookup, readFirstBytes } from './send.js';
import { BlockedUrl, checkUrlShape, isAddressLiteral, resolveCheckedAddresses, type GuardOptions } from './url-guard.js';

/** What a guarded call got back: the status and at most `limit` bytes of the answer. */
export interface GuardedAnswer {
  status: number;
  bytes: Buffer;
  /** The answer went on past the limit, or broke off. */
  cut: boolean;
}

/** Why a guarded call got no answer; never the request's body, which may hold a secret. */
export class GuardedPostFailed extends Error {
  constructor(readonly kind: 'blocked' | 'timeout' | 'network', message: string) {
    super(message);
  }
}

/**
 * POSTs a form-encoded body to a URL under the same outbound rules as webhooks (url-guard.ts):
 * the URL's shape and every address its name resolves to are checked before the call, and the
 * socket connects only to a checked address (checkedLookup), so DNS rebinding cannot slip a
 * private address in between. Redirects are not followed. One connection pool for every call.
 * Loaded only at the first call (through import()), so a process that never verifies a CAPTCHA
 * does not load the HTTP client.
 */
export class GuardedPoster {
  private readonly agent: Agent;

  constructor(private readonly guard: GuardOptions, timeoutMs: number) {
    this.agent = new Agent({ connect: { lookup: checkedLookup(guard), timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  }

  async postForm(raw: string, form: URLSearchParams, options: { timeoutMs: number; limit: number; userAgent: string }): Promise<GuardedAnswer> {
    try {
      const url = checkUrlShape(raw, this.guard);
      // A literal address was checked with the shape and never reaches the lookup.
      if (!isAddressLiteral(url)) await resolveCheckedAddresses(url, this.guard);
    } catch (error) {
      if (error instanceof BlockedUrl) throw new GuardedPostFailed('blocked', 'destination not allowed');
      throw error;
    }
    // One deadline for the whole call, answer included: a provider that trickles its answer is as
    // unavailable as one that says nothing.
    const signal = AbortSignal.timeout(options.timeoutMs);
    try {
      const response = await request(raw, {
        method: 'POST',
        dispatcher: this.agent,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', 'accept-encoding': 'identity', 'user-agent': options.userAgent },
        body: form.toString(),
        signal,
      });
      const { bytes, cut } = await readFirstBytes(response.body, options.limit);
      if (signal.aborted) throw new GuardedPostFailed('timeout', `no answer within ${options.timeoutMs} ms`);
      return { status: response.statusCode, bytes, cut };
    } catch (error) {
      if (error instanceof GuardedPostFailed) throw error;
      const cause = (error as { cause?: unknown }).cause;
      if (cause instanceof BlockedUrl || error instanceof BlockedUrl) throw new GuardedPostFailed('blocked', 'destination not allowed');
      const name = (error as Error).name;
      const code = (error as { code?: string }).code ?? (cause as { code?: string } | undefined)?.code;
      if (signal.aborted || name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
        throw new GuardedPostFailed('timeout', `no answer within ${options.timeoutMs} ms`);
      }
      // The code alone (ECONNREFUSED, ENOTFOUND…): a message could quote more than needed.
      throw new GuardedPostFailed('network', code ?? 'network error');
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
