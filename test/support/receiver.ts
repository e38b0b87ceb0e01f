import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A real HTTP server on loopback, addressed as `localhost`, a host name, as real servers are: it
 * listens on 127.0.0.1 and, where the machine has it, on ::1 at the same port, so either answer
 * of the resolver reaches it. What it answers is its subclass's `handle`.
 */
export abstract class LoopbackServer {
  private readonly servers: Server[] = [];

  protected abstract handle(request: IncomingMessage, response: ServerResponse): void;

  /** Starts it; answers `http://localhost:PORT`. */
  protected async listenOnLoopback(): Promise<string> {
    const port = await this.listen('127.0.0.1', 0);
    await this.listen('::1', port).catch(() => undefined); // no IPv6 loopback here: 127.0.0.1 alone
    return `http://localhost:${port}`;
  }

  private async listen(host: string, port: number): Promise<number> {
    const server = createServer((request, response) => this.handle(request, response));
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

/** A webhook receiver on loopback that records every call and answers with `status`. */
export class Receiver extends LoopbackServer {
  readonly received: Received[] = [];
  status = 200;

  protected handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      this.received.push({ headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(this.status, { 'content-type': 'text/plain', 'x-receiver': 'test' }).end(`answered ${this.status}`);
    });
  }

  /** Starts it; answers its URL, `http://localhost:PORT/hooks`. */
  async start(): Promise<string> {
    return `${await this.listenOnLoopback()}/hooks`;
  }
}
