import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../src/errors.js';
import { FORM_LIMITS, readMultipart, type FormFilePart } from '../src/http/form-submission.js';
import { expectPrototypesUntouched } from './support/untouched-prototypes.js';

/**
 * The multipart reader on a real Fastify server over loopback, fed raw bodies as browsers (and
 * hostile clients) send them. Files go to a store that counts their bytes, as uploadFile would.
 */

interface Answer {
  fields?: readonly (readonly [string, string])[];
  stored?: { field: string; name: string; contentType: string; bytes: number }[];
  error?: { code: string; message: string };
}

let app: FastifyInstance;
let base: string;
const FILE_MAX = 1000;
const FIELD_BYTES = 4096;

beforeAll(async () => {
  app = Fastify();
  await app.register(multipart);
  app.post('/form', async (request) => {
    const stored: string[] = [];
    const files: NonNullable<Answer['stored']> = [];
    const storeFile = async (part: FormFilePart) => {
      let bytes = 0;
      for await (const chunk of part.body) bytes += (chunk as Buffer).length;
      if (bytes > FILE_MAX) throw new AppError('PAYLOAD_TOO_LARGE', 'file too large');
      files.push({ field: part.field, name: part.name, contentType: part.contentType, bytes });
      return `fil_${files.length}`;
    };
    try {
      const fields = await readMultipart(request, { fileMaxBytes: FILE_MAX, fieldBytes: FIELD_BYTES, storeFile, stored });
      return { fields, stored: files } satisfies Answer;
    } catch (error) {
      if (!(error instanceof AppError)) return { error: { code: 'NOT_AN_APP_ERROR', message: String(error) } };
      return { error: { code: error.code, message: error.message }, stored: files } satisfies Answer;
    }
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(() => app.close());

const BOUNDARY = '----plainbaseFormBoundary7MA4YWxkTrZu0gW';
const field = (name: string, value: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const file = (name: string, filename: string, content: string, type = 'text/plain') =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n${content}\r\n`;
const end = `--${BOUNDARY}--\r\n`;

async function send(body: string): Promise<Answer> {
  const response = await fetch(`${base}/form`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body });
  expect(response.status).toBe(200);
  return (await response.json()) as Answer;
}

describe('readMultipart', () => {
  it('reads fields in order and stores each file as it arrives; its field holds the stored id', async () => {
    const answer = await send(field('name', 'Ada') + file('cv', 'cv.txt', 'hello') + field('tags', 'a') + field('tags', 'b') + file('cv', 'more.txt', 'x'.repeat(10)) + end);
    expect(answer.fields).toEqual([['name', 'Ada'], ['cv', 'fil_1'], ['tags', 'a'], ['tags', 'b'], ['cv', 'fil_2']]);
    expect(answer.stored).toEqual([
      { field: 'cv', name: 'cv.txt', contentType: 'text/plain', bytes: 5 },
      { field: 'cv', name: 'more.txt', contentType: 'text/plain', bytes: 10 },
    ]);
  });

  it('skips a file input left empty (no file name, no bytes), as browsers send it', async () => {
    const answer = await send(field('name', 'Ada') + file('cv', '', '', 'application/octet-stream') + end);
    expect(answer).toEqual({ fields: [['name', 'Ada']], stored: [] });
  });

  it('refuses more files or fields than the limits, with 413', async () => {
    const files = Array.from({ length: FORM_LIMITS.files + 1 }, (_, i) => file('f', `${i}.txt`, 'x')).join('');
    expect((await send(files + end)).error?.code).toBe('PAYLOAD_TOO_LARGE');
    const fields = Array.from({ length: FORM_LIMITS.fields + 1 }, (_, i) => field(`f${i}`, '1')).join('');
    expect((await send(fields + end)).error?.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('refuses the fields together past their byte limit, a long name (400) and a long value (413)', async () => {
    const many = Array.from({ length: 5 }, (_, i) => field(`f${i}`, 'x'.repeat(1000))).join('');
    expect((await send(many + end)).error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining(`${FIELD_BYTES} bytes`) });
    expect((await send(field('n'.repeat(FORM_LIMITS.fieldNameBytes + 1), 'x') + end)).error?.code).toBe('INVALID_REQUEST');
    expect((await send(field('v', 'x'.repeat(FORM_LIMITS.fieldValueBytes + 1)) + end)).error?.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('refuses a file over the file limit through its store', async () => {
    expect((await send(file('f', 'big.bin', 'x'.repeat(FILE_MAX + 10)) + end)).error?.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('refuses the names every object has (__proto__, constructor…) and text no engine stores, and touches no prototype', async () => {
    expect((await send(field('__proto__', 'x') + end)).error?.code).toBe('INVALID_REQUEST');
    expect((await send(field('a', 'nul\u0000here') + end)).error?.code).toBe('INVALID_REQUEST');
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      expect((await send(field(name, 'c') + end)).error?.code, name).toBe('INVALID_REQUEST');
      expect((await send(file(name, 'x.txt', 'c') + end)).error?.code, name).toBe('INVALID_REQUEST');
    }
    // Names that are only near them are data.
    expect((await send(field('Constructor', 'c') + field('__proto', 'p') + field('prototype', 'q') + end)).fields).toEqual([['Constructor', 'c'], ['__proto', 'p'], ['prototype', 'q']]);
    expectPrototypesUntouched();
  });

  it('answers a form cut short, or no form at all, with a 4xx', async () => {
    const cut = await send(field('a', '1') + `--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"; filename="x.txt"\r\n\r\nhalf a fi`);
    expect(cut.error?.code).toMatch(/^(INVALID_REQUEST|PAYLOAD_TOO_LARGE)$/);
    const garbage = await send('this is not multipart at all');
    expect(garbage.error === undefined ? garbage.fields : garbage.error.code).toEqual(garbage.error ? 'INVALID_REQUEST' : []);
  });
});
