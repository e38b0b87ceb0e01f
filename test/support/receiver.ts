import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A real HTTP receiver on loopback that records every call and answers with `status`. */
export class Receiver {
  readonly received: Received[] = [];
  status = 200;
  private server: Server;

  constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.received.push({ headers: request.headers, body: Buffer.concat(chunks) });
        response.writeHead(this.status, { 'content-type': 'text/plain', 'x-receiver': 'test' }).end(`answered ${this.status}`);
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
