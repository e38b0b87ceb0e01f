import { Type } from 'typebox';
import { findCollection } from '../../../modules/collections/collections.js';
import { REFUSAL_REASONS, submissionChart } from '../../../modules/submissions/submission-counts.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { exampleId, Timestamp } from '../../schemas.js';
import { CollectionParams } from './collection-schemas.js';

const Count = (description: string) => Type.Integer({ minimum: 0, description });

const HOURS_EXAMPLE = Array.from({ length: 24 }, (_, index) => ({
  hour: new Date(Date.UTC(2026, 0, 15, index)).toISOString(),
  accepted: index === 23 ? 12 : 0,
  refused: index === 23 ? 3 : 0,
}));

const SubmissionCounts = Type.Object(
  {
    collectionId: Type.String(),
    hours: Type.Array(
      Type.Object({ hour: Timestamp, accepted: Count('Submissions stored in this hour.'), refused: Count('Submissions refused in this hour, a filled honeypot included.') }),
      { minItems: 24, maxItems: 24, description: 'The last 24 hours, oldest first; the last is the current hour. `hour` is its start.' },
    ),
    accepted: Count('Submissions stored in these 24 hours.'),
    refused: Count('Submissions refused in these 24 hours.'),
    refusedBy: Type.Object(Object.fromEntries(REFUSAL_REASONS.map((reason) => [reason, Count(`Refused as ${reason} in these 24 hours.`)])) as Record<(typeof REFUSAL_REASONS)[number], ReturnType<typeof Count>>, {
      description: 'Why: ORIGIN_NOT_ALLOWED, RATE_LIMITED, CAPTCHA_FAILED, HONEYPOT (answered 201, not stored), TOO_LARGE, INVALID (a body that does not parse or fit the schema).',
    }),
  },
  {
    examples: [{
      collectionId: exampleId('col'),
      hours: HOURS_EXAMPLE,
      accepted: 12,
      refused: 3,
      refusedBy: { ORIGIN_NOT_ALLOWED: 1, RATE_LIMITED: 0, CAPTCHA_FAILED: 0, HONEYPOT: 2, TOO_LARGE: 0, INVALID: 0 },
    }],
  },
);

export const registerGetSubmissionCounts: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/submissions', {
    config: { operation: 'collections.submissions', access: needs('collections:read') },
    schema: {
      summary: "A collection's public submissions in the last 24 hours, accepted and refused (by reason), per hour",
      tags: ['collections'],
      params: CollectionParams,
      response: { 200: SubmissionCounts },
    },
    handler: async (request) => {
      const { workspaceId } = inWorkspace(request);
      const row = await findCollection(deps.db, workspaceId, request.params.col, { includeTrashed: true });
      return submissionChart(deps, workspaceId, row.id);
    },
  });
