import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

/**
 * A real Redis server of the test's own (the `redis-server` binary on a free loopback port, no
 * persistence), so a test can stop, pause and restart it without touching the machine's shared
 * Redis or any other test.
 */
export interface TestRedis {
  url: string;
  /** Ends the server (SIGKILL: gone at once, as a crash would be). */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open but nothing is answered, as in a partition. */
  pause(): void;
  resume(): void;
  /** Empties it between tests. */
  flush(): Promise<void>;
}

export async function startTestRedis(): Promise<TestRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitUntil(async () => (await send(port, 'PING')).includes('PONG'), `redis-server on port ${port} did not answer PING`);
  };
  const stop = async () => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    stop,
    restart: async () => {
      await stop();
      await start();
    },
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    flush: async () => {
      await send(port, 'FLUSHALL');
    },
  };
}

/** One inline command over a fresh connection; the first reply's text, or '' if none came. */
function send(port: number, command: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    socket.setTimeout(1000, () => socket.destroy());
    socket.on('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.endsWith('\r\n')) socket.end();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(reply));
  });
}

async function waitUntil(check: () => Promise<boolean>, failure: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(failure);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
