import type { FastifyReply } from 'fastify';
import { recordJson, type RecordRead } from '../../../modules/records/record-shape.js';

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Sends JSON text already written: Fastify sends a string with a JSON content type as it is,
 * without the response schema's serializer (whose type the route's reply otherwise insists on).
 */
export function sendJson<R>(reply: R, json: string): R {
  return (reply as unknown as FastifyReply).type(JSON_CONTENT_TYPE).send(json) as unknown as R;
}

/** A page of records: `{"data":[…],"nextCursor":…}` and `total` when asked for, as listOf(RecordBody) plus total. */
export function recordPageJson(page: { data: readonly RecordRead[]; nextCursor: string | null; total?: number }): string {
  let json = '{"data":[';
  for (let i = 0; i < page.data.length; i++) json += (i === 0 ? '' : ',') + recordJson(page.data[i]!);
  json += `],"nextCursor":${JSON.stringify(page.nextCursor)}`;
  if (page.total !== undefined) json += `,"total":${JSON.stringify(page.total)}`;
  return `${json}}`;
}
