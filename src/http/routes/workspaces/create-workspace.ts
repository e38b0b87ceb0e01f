import { Type } from 'typebox';
import { createWorkspace } from '../../../modules/workspaces/workspaces.js';
import { PERSON } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { signedInPerson } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { DisplayName, Workspace } from '../../schemas.js';

export const registerCreateWorkspace: RegisterRoute = (app, deps) =>
  app.post('/v1/workspaces', {
    config: { operation: 'workspaces.create', access: PERSON },
    schema: {
      summary: 'Create a workspace; the signed-in person becomes its owner',
      tags: ['workspaces'],
      body: Type.Object({ name: DisplayName }, { additionalProperties: false, examples: [{ name: 'Acme research' }] }),
      response: { 201: Workspace },
    },
    handler: async (request, reply) => {
      const workspace = await createWorkspace(deps, signedInPerson(request), request.body.name, requestMeta(request));
      return reply.status(201).send(workspace);
    },
  });
