import { Type } from 'typebox';
import { ALL_RECORDS, bulkTrashRecords, bulkUpdateRecords } from '../../../modules/records/bulk-changes.js';
import { FILTER_LIMITS } from '../../../modules/records/query/filter-parser.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { AnyObject } from '../../schemas.js';
import { CollectionParams } from '../collections/collection-schemas.js';

/** Changes by filter (docs/bulk-changes.md): one transaction, a version and an event per changed record. */

const Filter = Type.String({
  minLength: 1,
  maxLength: FILTER_LIMITS.maxLength,
  description: `The records to change, in the filter syntax of the record list (live records only, never the trash); "${ALL_RECORDS}" for every live record.`,
  examples: ['data.status = "trial" && createdAt < "2026-01-01"'],
});
const DryRun = Type.Optional(Type.Boolean({ default: false, description: 'Answer the counts and change nothing.' }));

const BulkUpdateBody = Type.Object(
  {
    filter: Filter,
    patch: AnyObject({ description: 'A JSON Merge Patch (RFC 7386) applied to each record\'s data: null removes a field, objects merge, anything else replaces.', examples: [{ status: 'expired', trialEndsAt: null }] }),
    dryRun: DryRun,
  },
  { additionalProperties: false, examples: [{ filter: 'data.plan = "trial" && createdAt < "2026-01-01"', patch: { plan: 'expired', trialEndsAt: null } }] },
);
const BulkDeleteBody = Type.Object({ filter: Filter, dryRun: DryRun }, { additionalProperties: false, examples: [{ filter: 'data.status = "spam"', dryRun: true }] });

const Matched = Type.Integer({ description: 'Live records the filter matches.' });
const DryRunAnswer = Type.Boolean({ description: 'True when nothing was changed because the request asked only for the counts.' });
const BulkUpdateAnswer = Type.Object({
  matched: Matched,
  updated: Type.Integer({ description: 'Records the patch changed (or would change, on a dry run); a record it leaves as it is gets no new revision.' }),
  dryRun: DryRunAnswer,
}, { examples: [{ matched: 120, updated: 118, dryRun: false }] });
const BulkDeleteAnswer = Type.Object({
  matched: Matched,
  trashed: Type.Integer({ description: 'Records moved to the trash (or that would be, on a dry run).' }),
  dryRun: DryRunAnswer,
}, { examples: [{ matched: 42, trashed: 42, dryRun: true }] });

const LIMITS =
  'More matched records than PLAINBASE_BULK_MAX_RECORDS (100,000 by default) is 400 INVALID_REQUEST (details.limit), and nothing changes. See docs/bulk-changes.md.';

export const registerBulkUpdateRecords: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/records/bulk-update', {
    config: { operation: 'records.bulkUpdate', access: needs('records:update') },
    schema: {
      summary: 'Merge a patch into every live record a filter matches, in one transaction (emits record.updated per changed record)',
      description: `Every patched record must match the active schema, or nothing changes: 422 SCHEMA_VALIDATION_FAILED with details.records (up to 10: recordId and errors) and details.failed (how many). ${LIMITS}`,
      tags: ['records'],
      params: CollectionParams,
      body: BulkUpdateBody,
      response: { 200: BulkUpdateAnswer },
    },
    handler: async (request) => {
      const { filter, patch, dryRun } = request.body;
      return bulkUpdateRecords(deps, collectionContext(request), request.params.col, { filter, patch, dryRun });
    },
  });

export const registerBulkDeleteRecords: RegisterRoute = (app, deps) =>
  app.post('/v1/collections/:col/records/bulk-delete', {
    config: { operation: 'records.bulkDelete', access: needs('records:delete') },
    schema: {
      summary: 'Move every live record a filter matches to the trash, in one transaction (emits record.deleted per record)',
      description: LIMITS,
      tags: ['records'],
      params: CollectionParams,
      body: BulkDeleteBody,
      response: { 200: BulkDeleteAnswer },
    },
    handler: async (request) => {
      const { filter, dryRun } = request.body;
      return bulkTrashRecords(deps, collectionContext(request), request.params.col, { filter, dryRun });
    },
  });
