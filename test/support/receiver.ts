import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A real HTTP receiver on loopback that records every call and answers with `status`. It is
 * addressed as `localhost`, a host name, as real receivers are: it listens on 127.0.0.1 and, where
 * the machine has it, on ::1 at the same port, so either answer of the resolver reaches it.
 */
export class Receiver {
  readonly received: Received[] = [];
  status = 200;
  private readonly servers: Server[] = [];

  private handle = (request: IncomingMessage, response: ServerResponse): void => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      this.received.push({ headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(this.status, { 'content-type': 'text/plain', 'x-receiver': 'test' }).end(`answered ${this.status}`);
    });
  };

  async start(): Promise<string> {
    const port = await this.listen('127.0.0.1', 0);
    await this.listen('::1', port).catch(() => undefined); // no IPv6 loopback here: 127.0.0.1 alone
    return `http://localhost:${port}/hooks`;
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
