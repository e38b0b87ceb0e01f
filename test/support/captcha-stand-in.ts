import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer } from './receiver.js';

/** What the stand-in does with a call: answer this, or say nothing at all (a provider that hangs). */
export type StandInAnswer = { status: number; body: string | Buffer; contentType?: string } | 'silent';

export interface VerificationCall {
  path: string;
  headers: IncomingHttpHeaders;
  form: URLSearchParams;
}

/**
 * A CAPTCHA provider's verification endpoint on loopback, addressed as `localhost` (a
 * LoopbackServer, as the webhook receiver is). By default it accepts the token `pass` (and any
 * token starting with `pass`) and refuses every other, as Turnstile's and hCaptcha's siteverify
 * do: `{success, "error-codes"}`.
 */
export class CaptchaStandIn extends LoopbackServer {
  readonly calls: VerificationCall[] = [];
  answer: (form: URLSearchParams) => StandInAnswer = (form) =>
    form.get('response')?.startsWith('pass')
      ? { status: 200, body: JSON.stringify({ success: true, 'error-codes': [], hostname: 'localhost' }) }
      : { status: 200, body: JSON.stringify({ success: false, 'error-codes': ['invalid-input-response'] }) };

  protected handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      this.calls.push({ path: request.url ?? '', headers: request.headers, form });
      const answer = this.answer(form);
      if (answer === 'silent') return;
      response.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/json' }).end(answer.body);
    });
  }

  /** Starts it; answers its URL, `http://localhost:PORT/siteverify`. */
  async start(): Promise<string> {
    return `${await this.listenOnLoopback()}/siteverify`;
  }
}
