import type { Operation, SuccessBody } from './api-types.js';
import type { Transport } from './http.js';

/**
 * What a public submission answers: the new record's summary, never its data (the public may
 * create, but reads nothing back unless the collection is also public).
 */
export type SubmissionReceipt = Extract<SuccessBody<Operation<'/v1/collections/{col}/records', 'post'>>, { revision: number }>;

export interface SubmitOptions {
  /** The token the collection's CAPTCHA widget (Turnstile or hCaptcha) gave the visitor, when the collection asks for one. */
  captchaToken?: string;
  signal?: AbortSignal;
}

/**
 * Public submissions to one collection (by id, `col_…`): the records a visitor of a web page
 * creates with no key, when the collection's settings allow submissions from the page's origin.
 */
export class Submissions<T = Record<string, unknown>> {
  constructor(
    private readonly http: Transport,
    private readonly collection: string,
  ) {}

  /**
   * Creates a record from `data`, sending no credential whatever the client was given (no key, no
   * cookie). Throws PlainbaseError: ORIGIN_NOT_ALLOWED (403), RATE_LIMITED (429), CAPTCHA_FAILED
   * (403), UNAUTHENTICATED (401: the collection takes no submissions), SCHEMA_VALIDATION_FAILED (422).
   */
  async submit(data: T, options: SubmitOptions = {}): Promise<SubmissionReceipt> {
    const json: { data: T; captchaToken?: string } = { data };
    if (options.captchaToken !== undefined) json.captchaToken = options.captchaToken;
    return this.http.json<SubmissionReceipt>('post', '/v1/collections/{col}/records', { path: { col: this.collection }, json, signal: options.signal, anonymous: true });
  }
}
