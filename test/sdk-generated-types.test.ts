import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { GENERATED_TYPES, typesFromOpenApi } from '../sdk/scripts/types-from-openapi.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * The SDK's types are generated from the server's OpenAPI document and committed
 * (sdk/src/generated/openapi.ts). When a route changes and nobody regenerates them, the SDK would
 * describe an API that no longer exists: this test fails then. Run on both engines, since the
 * document must not depend on the database.
 */
describeEachEngine('the SDK\'s generated types', (engine) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(engine);
  });
  afterEach(async () => {
    await t.close();
  });

  it('are what the served /v1/openapi.json generates (else: npm run generate in sdk/)', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/v1/openapi.json`);
    expect(response.status).toBe(200);
    const generated = await typesFromOpenApi(await response.json());
    const committed = readFileSync(GENERATED_TYPES, 'utf8');
    // Compared whole, so that the failure shows the lines that differ.
    expect(committed, 'sdk/src/generated/openapi.ts is stale: run `npm run generate` in sdk/ and commit it').toBe(generated);
    // The operations the SDK's own methods stand on are all in it.
    for (const path of ['/v1/me', '/v1/collections/{col}/records', '/v1/collections/{col}/records/{rec}', '/v1/collections/{col}/import', '/v1/collections/{col}/export', '/v1/collections/{col}/files', '/v1/collections/{col}/files/{fil}/content']) {
      expect(committed).toContain(`    "${path}": {`);
    }
  });
});
