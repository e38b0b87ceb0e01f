import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the stand-in does with a call: answer this, or say nothing at all (a provider that hangs). */
export type StandInAnswer = { status: number; body: string | Buffer; contentType?: string } | 'silent';

export interface VerificationCall {
  path: string;
  headers: IncomingHttpHeaders;
  form: URLSearchParams;
}

/**
 * A CAPTCHA provider's verification endpoint on loopback, addressed as `localhost` (it listens on
 * 127.0.0.1 and, where the machine has it, ::1 at the same port). By default it accepts the token
 * `pass` (and any token starting with `pass`) and refuses every other, as Turnstile's and
 * hCaptcha's siteverify do: `{success, "error-codes"}`.
 */
export class CaptchaStandIn {
  readonly calls: VerificationCall[] = [];
  answer: (form: URLSearchParams) => StandInAnswer = (form) =>
    form.get('response')?.startsWith('pass')
      ? { status: 200, body: JSON.stringify({ success: true, 'error-codes': [], hostname: 'localhost' }) }
      : { status: 200, body: JSON.stringify({ success: false, 'error-codes': ['invalid-input-response'] }) };
  private readonly servers: Server[] = [];

  private handle = (request: IncomingMessage, response: ServerResponse): void => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      this.calls.push({ path: request.url ?? '', headers: request.headers, form });
      const answer = this.answer(form);
      if (answer === 'silent') return;
      response.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/json' }).end(answer.body);
    });
  };

  /** Starts it; answers its URL, `http://localhost:PORT/siteverify`. */
  async start(): Promise<string> {
    const port = await this.listen('127.0.0.1', 0);
    await this.listen('::1', port).catch(() => undefined); // no IPv6 loopback here: 127.0.0.1 alone
    return `http://localhost:${port}/siteverify`;
  }

  private async listen(host: string, port: number): Promise<number> {
    const server = createServer(this.handle);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, resolve);
    });
    this.servers.push(server);
    return (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((server) => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    }));
  }
}
