import { Type } from 'typebox';
import { checkRecordsAgainstSchema } from '../../../modules/records/check-against-schema.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { exampleId } from '../../schemas.js';
import { VersionParams } from './schema-version-schemas.js';

export const registerCheckSchemaVersion: RegisterRoute = (app, deps) =>
  app.get('/v1/collections/:col/schemas/:version/check', {
    // It reads the records (their ids and failing fields), so it needs what reading them needs.
    config: { operation: 'schemas.check', access: needs('records:read') },
    schema: {
      summary: "How many of the collection's records a schema version would refuse",
      description:
        'Checks the live records, oldest first, against the version without changing anything: activating a version never re-checks ' +
        'stored records, so this tells beforehand how many would not match. At most 10,000 records or 2 seconds; `complete` is false ' +
        'when the check stopped before the last record, and the counts are then a lower bound.',
      tags: ['schemas'],
      params: VersionParams,
      response: {
        200: Type.Object({
          version: Type.Integer(),
          checked: Type.Integer({ description: 'Live records looked at.' }),
          notMatching: Type.Integer({ description: 'Of those, how many the version would refuse.' }),
          complete: Type.Boolean({ description: 'False when the limits stopped the check before the last record.' }),
          examples: Type.Array(
            Type.Object({ recordId: Type.String(), field: Type.String(), message: Type.String() }),
            { description: 'Up to 5 records that would not match, each with its first failing field.' },
          ),
        }, {
          examples: [{ version: 2, checked: 4, notMatching: 1, complete: true, examples: [{ recordId: exampleId('rec'), field: 'data.email', message: 'must be a string' }] }],
        }),
      },
    },
    handler: async (request) => checkRecordsAgainstSchema(deps, inWorkspace(request).workspaceId, request.params.col, request.params.version),
  });
