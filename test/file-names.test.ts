import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentDisposition } from '../src/http/routes/files/content-headers.js';
import { expectError, signedInOwner, type Client, type Reply } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * A file name is shown to people and offered to their browser as the download's name. Bidi
 * controls and other invisible format characters (Unicode Cf) would let `invoice_‮fdp.exe`
 * show as `invoice_exe.pdf`: they are removed at upload, and never reach Content-Disposition.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}]/u;
const FORMAT_CHARACTERS = [
  '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c',
  '\u00ad', '\u200b', '\u200c', '\u200d', '\u2060', '\u2064', '\ufeff', '\ufff9', '\ufffb', '\u{e0001}', '\u{e007f}',
];
const CONTROL_CHARACTERS = ['\u0000', '\u0007', '\t', '\n', '\r', '\u001b', '\u007f', '\u0085', '\u009f'];
const PLAIN = ['a', 'Z', '7', '.', '_', '-', ' ', '"', '%', '\\', 'é', 'ß', '中', '😀', 'ع'];

/** What a browser takes as the name: the UTF-8 `filename*`, decoded, and the ASCII `filename`. */
function offeredNames(header: string): string[] {
  const encoded = /filename\*=UTF-8''([^;]*)/.exec(header)?.[1];
  const ascii = /filename="([^"]*)"/.exec(header)?.[1];
  expect(encoded, header).toBeDefined();
  expect(ascii, header).toBeDefined();
  return [decodeURIComponent(encoded!), ascii!];
}

describe('Content-Disposition', () => {
  it('never carries a control or format character, whatever name was stored before uploads removed them', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...FORMAT_CHARACTERS, ...CONTROL_CHARACTERS, ...PLAIN), minLength: 1, maxLength: 40 }), (name) => {
        const header = contentDisposition('attachment', name);
        expect(header).not.toMatch(INVISIBLE);
        for (const offered of offeredNames(header)) expect(offered).not.toMatch(INVISIBLE);
      }),
      { numRuns: 500 },
    );
    expect(offeredNames(contentDisposition('attachment', 'invoice_\u202efdp.exe'))).toEqual(['invoice_fdp.exe', 'invoice_fdp.exe']);
  });
});

describeEachEngine('file names', (engine) => {
  let t: TestApp;
  let owner: Client;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-file-names-'));
    t = await startTestApp(engine, { dataDir });
    owner = await signedInOwner(t);
    expect((await owner.post('/v1/collections', { name: 'docs' })).status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const upload = (name: string): Promise<Reply> =>
    owner.call('POST', `/v1/collections/docs/files?name=${encodeURIComponent(name)}`, 'content', { 'content-type': 'application/octet-stream' });
  const downloadHeader = async (fileId: string): Promise<string> => {
    const reply = await owner.get(`/v1/collections/docs/files/${fileId}/content`);
    expect(reply.status).toBe(200);
    return String(reply.headers['content-disposition']);
  };

  it('an upload named invoice_<U+202E>fdp.exe is stored, listed and downloaded as invoice_fdp.exe', async () => {
    const reply = await upload('invoice_\u202efdp.exe');
    expect(reply.status).toBe(201);
    expect(reply.body.name).toBe('invoice_fdp.exe');
    expect((await owner.get(`/v1/collections/docs/files/${reply.body.id}`)).body.name).toBe('invoice_fdp.exe');
    const header = await downloadHeader(reply.body.id);
    expect(header).toBe('attachment; filename="invoice_fdp.exe"; filename*=UTF-8\'\'invoice_fdp.exe');
    // A name of nothing but format characters would be blank: refused, saying why.
    expect(expectError(await upload('\u202e\u200f'), 400, 'INVALID_REQUEST').message).toMatch(/format characters/);
  });

  it('whatever control and format characters a name holds, it is refused or stored and offered without them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: fc.constantFrom(...FORMAT_CHARACTERS, ...CONTROL_CHARACTERS, ...PLAIN), minLength: 1, maxLength: 30 }), async (name) => {
        const reply = await upload(name);
        if (reply.status !== 201) {
          expectError(reply, 400, 'INVALID_REQUEST');
          // Only a control character, or nothing visible at all, is a reason to refuse.
          expect(/[\p{Cc}]/u.test(name) || name.replace(/\p{Cf}/gu, '') === '').toBe(true);
          return;
        }
        expect(reply.body.name).not.toMatch(INVISIBLE);
        expect(reply.body.name).toBe(name.replace(/\p{Cf}/gu, ''));
        const header = await downloadHeader(reply.body.id);
        expect(header).not.toMatch(INVISIBLE);
        for (const offered of offeredNames(header)) expect(offered).not.toMatch(INVISIBLE);
      }),
      { numRuns: 25 },
    );
  });
});
