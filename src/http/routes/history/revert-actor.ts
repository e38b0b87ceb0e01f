import { Type } from 'typebox';
import { MAX_LISTED_CONFLICTS, MAX_REVERT_COLLECTIONS, revertActor } from '../../../modules/records/revert-actor.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { collectionContext } from '../../collection-context.js';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId, Timestamp } from '../../schemas.js';
import { CollectionRef } from '../collections/collection-schemas.js';

/** Undo what one caller did (docs/history.md): every record it changed in a window, back as it was. */

const RevertBody = Type.Object(
  {
    actor: Type.Object(
      {
        type: Type.Union([Type.Literal('key'), Type.Literal('person'), Type.Literal('service_account'), Type.Literal('anonymous')], {
          description: 'Who made the changes to undo: an API key, a person, a service account, or public submissions (anonymous).',
        }),
        id: Type.Union([Type.String({ pattern: '^(key|per|sa)_[0-9a-z]{26}$' }), Type.Null()], {
          description: 'The key\'s, person\'s or service account\'s id; null for anonymous (public submissions carry no id).',
        }),
      },
      { additionalProperties: false },
    ),
    since: { ...Timestamp, description: 'Changes made at or after this time are undone.' },
    until: Type.Optional({ ...Timestamp, description: 'Changes made before this time are undone (default: now).' }),
    collections: Type.Optional(Type.Array(CollectionRef, { minItems: 1, maxItems: MAX_REVERT_COLLECTIONS, description: 'Only records of these collections (ids or names).' })),
    dryRun: Type.Optional(Type.Boolean({ description: 'Count what would be done and list the conflicts, changing nothing.' })),
  },
  {
    additionalProperties: false,
    examples: [{ actor: { type: 'key', id: exampleId('key') }, since: EXAMPLE_TIME, until: EXAMPLE_LATER, dryRun: true }],
  },
);

const RevertAnswer = Type.Object(
  {
    reverted: Type.Integer({ description: 'Records whose earlier data was put back as a new revision.' }),
    trashed: Type.Integer({ description: 'Records moved to the trash (the caller created them, or they were in the trash before).' }),
    restored: Type.Integer({ description: 'Records brought back out of the trash (the caller had trashed them).' }),
    conflicts: Type.Array(
      Type.Object({
        recordId: Type.String(),
        collectionId: Type.String(),
        reason: Type.String({ description: 'changed_by_other, changed_after_window, history_gone or collection_in_trash' }),
      }),
      { description: `Records left alone, and why (at most ${MAX_LISTED_CONFLICTS.toLocaleString('en')} listed).` },
    ),
    dryRun: Type.Boolean(),
  },
  {
    examples: [{ reverted: 120, trashed: 4, restored: 1, conflicts: [{ recordId: exampleId('rec'), collectionId: exampleId('col'), reason: 'changed_by_other' }], dryRun: true }],
  },
);

export const registerRevertActor: RegisterRoute = (app, deps) =>
  app.post('/v1/history/revert', {
    // Owners and admins, signed in: what may delete records for good may also rewrite them in bulk.
    config: { operation: 'history.revert', access: needs('records:purge') },
    schema: {
      summary: 'Undo what one caller (a key, a person, a service account, public submissions) did to records in a window of time',
      tags: ['records'],
      body: RevertBody,
      response: { 200: RevertAnswer },
    },
    handler: async (request) => revertActor(deps, collectionContext(request), request.body),
  });
