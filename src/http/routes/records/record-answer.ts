import type { FastifyReply, FastifyRequest } from 'fastify';
import { toRecordSummary } from '../../../modules/records/record-shape.js';
import type { VersionedRecord } from '../../../modules/records/records.js';
import { callerMay } from '../../auth.js';

/**
 * Sends the answer of a change to a record (update, trash, restore, attach, detach) with its
 * ETag. Only a caller that may read records sees the record's data and files; any other gets
 * which record it changed and at which revision (RecordSummaryBody), so a write-only key cannot
 * read what it writes to (docs/security.md).
 */
export function sendRecordChange(request: FastifyRequest, reply: FastifyReply, { record, revision, etag }: VersionedRecord): FastifyReply {
  reply.header('etag', etag);
  if (callerMay(request, 'records:read')) return reply.send(record);
  return reply.send(toRecordSummary(record, revision));
}
