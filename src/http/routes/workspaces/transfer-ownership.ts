import { Type } from 'typebox';
import { transferOwnership } from '../../../modules/workspaces/workspaces.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { NoContent } from '../../schemas.js';
import { inWorkspace } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { idOf } from '../../schemas.js';

export const registerTransferOwnership: RegisterRoute = (app, deps) =>
  app.post('/v1/workspace/transfer-ownership', {
    config: { operation: 'workspaces.transferOwnership', access: needs('workspace:transfer') },
    schema: {
      summary: 'Make another member the owner; the current owner becomes an admin',
      tags: ['workspaces'],
      body: Type.Object({ personId: idOf('per') }, { additionalProperties: false, examples: [{ personId: 'per_01jbx3q4r5s6t7v8w9x0y1z2a3' }] }),
      response: { 204: NoContent },
    },
    handler: async (request, reply) => {
      const { workspaceId, person } = inWorkspace(request);
      await transferOwnership(deps, workspaceId, person!, request.body.personId, requestMeta(request));
      return reply.status(204).send(null);
    },
  });
