import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const webRoot = fileURLToPath(new URL('.', import.meta.url));

/**
 * The dashboard build: `vite build --config web/vite.config.ts` writes web/dist, which the
 * service itself serves at `/` (src/http/dashboard.ts). `vite` in dev mode proxies the API to a
 * service on DASHBOARD_API (default http://127.0.0.1:8080).
 */
export default defineConfig({
  root: webRoot,
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  server: {
    proxy: { '/v1': process.env.DASHBOARD_API ?? 'http://127.0.0.1:8080' },
  },
});
