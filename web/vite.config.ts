import react from '@vitejs/plugin-react';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

const webRoot = fileURLToPath(new URL('.', import.meta.url));
const repositoryRoot = path.resolve(webRoot, '..');

/**
 * Every build writes sources.json beside index.html: the files of the repository outside web/
 * that it read (the server's role table, its event types…). The test suite rebuilds the dashboard
 * when one of them, or web/ itself, is newer than the build (test/e2e/support/build-dashboard.ts),
 * whichever command made the build.
 */
function recordSourcesOutsideWeb(): Plugin {
  return {
    name: 'plainbase-record-sources',
    writeBundle(options) {
      const files = new Set<string>();
      for (const id of this.getModuleIds()) {
        const file = id.split('?')[0]!;
        if (!path.isAbsolute(file) || !file.startsWith(repositoryRoot) || file.startsWith(webRoot) || file.includes(`${path.sep}node_modules${path.sep}`)) continue;
        if (fs.existsSync(file)) files.add(path.relative(repositoryRoot, file).split(path.sep).join('/'));
      }
      fs.writeFileSync(path.join(options.dir ?? path.join(webRoot, 'dist'), 'sources.json'), `${JSON.stringify([...files].sort(), null, 2)}\n`);
    },
  };
}

/**
 * The dashboard build: `vite build --config web/vite.config.ts` writes web/dist, which the
 * service itself serves at `/` (src/http/dashboard.ts). `vite` in dev mode proxies the API to a
 * service on DASHBOARD_API (default http://127.0.0.1:8080).
 */
export default defineConfig({
  root: webRoot,
  plugins: [react(), recordSourcesOutsideWeb()],
  // The API's generated types (web/tsconfig.json names the same file); imported as types only.
  resolve: { alias: { '@plainbase/openapi': path.join(repositoryRoot, 'sdk/src/generated/openapi.ts') } },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  server: {
    proxy: { '/v1': process.env.DASHBOARD_API ?? 'http://127.0.0.1:8080' },
  },
});
