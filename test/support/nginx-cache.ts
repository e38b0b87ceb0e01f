import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './server-process.js';

/**
 * A real caching reverse proxy in front of an app: Debian's nginx (`apt-get install -y nginx`;
 * .ci/run installs it when missing), started as the test's own process with a temporary config,
 * a cache on a temporary folder, on a free loopback port. Every answer says X-Cache: HIT when
 * nginx served it from its cache.
 *
 * Two locations: `/` is a cache as shipped (it honours Cache-Control and Vary); `/ignoring-vary/`
 * ignores Vary, as a careless CDN would, to show what the tests would see without it.
 */
export const NGINX = process.env.PLAINBASE_TEST_NGINX ?? '/usr/sbin/nginx';

/** Whether nginx can run here; in CI (CI=true) its absence is a failure, elsewhere a loud skip. */
export function nginxAvailable(): boolean {
  const found = spawnSync(NGINX, ['-v']).status === 0;
  if (found) return true;
  const reason = `nginx is not installed at ${NGINX}: run \`apt-get install -y nginx\` (.ci/run does it when missing)`;
  if (process.env.CI === 'true') throw new Error(`${reason}; the caching proxy tests are required here.`);
  process.stderr.write(`\n*** ${reason}: SKIPPING the caching proxy tests. ***\n\n`);
  return false;
}

export interface CachingProxy {
  /** http://127.0.0.1:<port> */
  url: string;
  stop(): Promise<void>;
}

export async function startCachingProxy(upstreamPort: number): Promise<CachingProxy> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'plainbase-nginx-'));
  const port = await freePort();
  const proxied = (zone: string, extra = '') => `
      proxy_pass http://127.0.0.1:${upstreamPort}/;
      proxy_http_version 1.1;
      proxy_cache ${zone};
      proxy_cache_key ${zone}$request_uri;
      ${extra}
      add_header X-Cache $upstream_cache_status always;`;
  const config = `
daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  proxy_cache_path ${dir}/cache levels=1:2 keys_zone=plainbase:1m max_size=10m inactive=10m use_temp_path=off;
  proxy_cache_path ${dir}/careless levels=1:2 keys_zone=careless:1m max_size=10m inactive=10m use_temp_path=off;
  server {
    listen 127.0.0.1:${port};
    location / {${proxied('plainbase')}
    }
    location /ignoring-vary/ {${proxied('careless', 'proxy_ignore_headers Vary;')}
    }
  }
}
`;
  await writeFile(path.join(dir, 'nginx.conf'), config);
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await waitForPort(port, child);
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`nginx exited with code ${child.exitCode} before listening`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`nginx did not listen on port ${port} within 10 s`);
}
