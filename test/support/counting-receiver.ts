import fs from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import net from 'node:net';

/**
 * A webhook receiver for tests with several server processes: answers 200 after 5-15 ms (so a
 * second attempt of the same delivery would overlap the first), counts the calls in flight per
 * x-baas-delivery and all calls per delivery, and tells which process made each call from the
 * owner of the client socket (/proc, on Linux).
 */
/**
 * The process holding the client end of a loopback connection to `serverPort` from `clientPort`:
 * the socket's inode from /proc/net/tcp, then the pid among `pids` with that socket open. Null
 * where /proc cannot tell (not Linux, or the socket is already gone).
 */
function ownerOf(clientPort: number, serverPort: number, pids: number[]): number | null {
  const hex = (port: number) => `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let inode: string | undefined;
  try {
    for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(hex(clientPort)) && fields[2]?.endsWith(hex(serverPort))) inode = fields[9];
    }
    if (!inode) return null;
    for (const pid of pids) {
      for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
        try {
          if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
        } catch {
          // closed meanwhile
        }
      }
    }
  } catch {
    // no /proc
  }
  return null;
}

/** Answers 200 after 5-15 ms, so that a second attempt of the same delivery would overlap the first. */
export class CountingReceiver {
  calls = 0;
  readonly attempts = new Map<string, number>();
  readonly inFlight = new Map<string, number>();
  maxInFlightPerDelivery = 0;
  /** Calls per server process (pid), or "unknown". */
  readonly callsBy = new Map<string, number>();
  pids: number[] = [];
  private readonly owners = new Map<number, string>();
  private readonly server: HttpServer;
  private readonly watchers = new Set<() => void>();

  constructor() {
    this.server = createServer((request, response) => {
      const delivery = String(request.headers['x-baas-delivery']);
      const overlapping = (this.inFlight.get(delivery) ?? 0) + 1;
      this.inFlight.set(delivery, overlapping);
      this.maxInFlightPerDelivery = Math.max(this.maxInFlightPerDelivery, overlapping);
      const owner = this.owners.get(request.socket.remotePort!) ?? 'unknown';
      request.resume();
      request.on('end', () => {
        this.calls++;
        this.attempts.set(delivery, (this.attempts.get(delivery) ?? 0) + 1);
        this.callsBy.set(owner, (this.callsBy.get(owner) ?? 0) + 1);
        // The receiver's own pace, not a wait in the test.
        setTimeout(() => {
          const left = this.inFlight.get(delivery)! - 1;
          if (left > 0) this.inFlight.set(delivery, left);
          else this.inFlight.delete(delivery);
          response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
          for (const watcher of this.watchers) watcher();
        }, 5 + Math.random() * 10);
      });
    });
    this.server.on('connection', (socket: net.Socket) => {
      const port = (this.server.address() as net.AddressInfo).port;
      const owner = ownerOf(socket.remotePort!, port, this.pids);
      this.owners.set(socket.remotePort!, owner === null ? 'unknown' : String(owner));
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://localhost:${(this.server.address() as net.AddressInfo).port}/hooks`;
  }

  /** Resolves once `done()` holds, checked now and after every answered call; fails after `timeoutMs`. */
  until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${what}: not within ${timeoutMs / 1000} s (${this.calls} calls so far)`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.watchers.delete(check);
      };
      this.watchers.add(check);
      check();
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

