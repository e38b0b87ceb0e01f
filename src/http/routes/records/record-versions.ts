import { Type } from 'typebox';
import { getRecordVersion, listRecordVersions, restoreRecordVersion } from '../../../modules/records/record-history.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { collectionContext } from '../../collection-context.js';
import { decodeCursor, page } from '../../cursor.js';
import { EXAMPLE_TIME, listOf, Paging } from '../../schemas.js';
import { sendRecordChange } from './record-answer.js';
import { IfMatchHeaders, RecordChangeBody, RecordData, RecordParams } from './record-schemas.js';

/** A record's history (docs/history.md): every revision as it was left, who made it and how. */

const Revision = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });
const VersionParams = Type.Object({ ...RecordParams.properties, revision: Revision });

export const RecordVersion = Type.Object(
  {
    revision: Type.Integer({ description: 'The record\'s revision this version is (its ETag without quotes).' }),
    data: RecordData,
    schemaVersion: Type.Union([Type.Integer(), Type.Null()]),
    change: Type.Union(
      [Type.Literal('created'), Type.Literal('updated'), Type.Literal('replaced'), Type.Literal('trashed'), Type.Literal('restored'), Type.Literal('reverted')],
      { description: 'What made this revision.' },
    ),
    changedAt: Type.String({ format: 'date-time' }),
    changedBy: Type.Object({
      type: Type.String({ description: 'person, key, service_account, anonymous or system' }),
      id: Type.Union([Type.String(), Type.Null()]),
      name: Type.Union([Type.String(), Type.Null()]),
    }),
    requestId: Type.Union([Type.String(), Type.Null()]),
  },
  {
    examples: [{
      revision: 2,
      data: { name: 'Ada Lovelace' },
      schemaVersion: null,
      change: 'updated',
      changedAt: EXAMPLE_TIME,
      changedBy: { type: 'key', id: 'key_01jd0000000000000000000000', name: 'Website form' },
      requestId: 'req_1',
    }],
  },
);

export const registerListRecordVersions: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/records/:rec/versions', {
    config: { operation: 'records.versions.list', access: needs('records:read') },
    schema: {
      summary: "A record's versions, newest first (kept PLAINBASE_HISTORY_DAYS days; the newest always)",
      tags: ['records'],
      params: RecordParams,
      querystring: Type.Object({ ...Paging }, { additionalProperties: false }),
      response: { 200: listOf(RecordVersion) },
    },
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      // Newest first: the cursor is the last revision of the page.
      const before = decodeCursor(cursor, (position) => /^[1-9][0-9]{0,9}$/.test(position));
      const rows = await listRecordVersions(deps, inWorkspace(request).workspaceId, request.params.col, request.params.rec, {
        limit: limit + 1,
        before: before === undefined ? undefined : Number(before),
      });
      return page(rows, limit, (row) => String(row.revision), deps.config.pageBytes);
    },
  });

export const registerGetRecordVersion: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/records/:rec/versions/:revision', {
    config: { operation: 'records.versions.get', access: needs('records:read') },
    schema: { summary: 'One version of a record', tags: ['records'], params: VersionParams, response: { 200: RecordVersion } },
    handler: async (request) =>
      getRecordVersion(deps, inWorkspace(request).workspaceId, request.params.col, request.params.rec, request.params.revision),
  });

export const registerRestoreRecordVersion: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/records/:rec/versions/:revision/restore', {
    config: { operation: 'records.versions.restore', access: needs('records:update') },
    schema: {
      summary: "Put a version's data back as a new revision (a replace: If-Match and the active schema apply; emits record.updated)",
      tags: ['records'],
      params: VersionParams,
      headers: IfMatchHeaders,
      response: { 200: RecordChangeBody },
    },
    handler: async (request, reply) => {
      const changed = await restoreRecordVersion(deps, collectionContext(request), request.params.col, request.params.rec, request.params.revision, request.headers['if-match']);
      return sendRecordChange(request, reply, changed);
    },
  });
