import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import {
  createServiceAccount,
  deleteServiceAccount,
  listServiceAccounts,
  updateServiceAccount,
  type AdminContext,
} from '../../../modules/service-accounts/service-accounts.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { requestMeta } from '../../request-meta.js';
import { decodeCursor, idPosition, page } from '../../cursor.js';
import { AssignableRole, DisplayName, EXAMPLE_TIME, exampleId, idOf, listOf, NoContent, Paging, Timestamp } from '../../schemas.js';

const ServiceAccount = Type.Object(
  { id: Type.String(), name: Type.String(), role: AssignableRole, createdBy: Type.String(), createdAt: Timestamp },
  { examples: [{ id: exampleId('sa'), name: 'billing sync', role: 'editor', createdBy: exampleId('per'), createdAt: EXAMPLE_TIME }] },
);
const Params = Type.Object({ sa: idOf('sa') });
const MANAGE = needs('service-accounts:manage');

function adminContext(request: FastifyRequest): AdminContext {
  const { workspaceId, actor } = inWorkspace(request);
  return { workspaceId, actor, meta: requestMeta(request) };
}

export const registerListServiceAccounts: RegisterRoute = (app, deps) =>
  app.get('/v1/service-accounts', {
    config: { operation: 'serviceAccounts.list', access: MANAGE },
    schema: {
      summary: 'Service accounts of the workspace',
      tags: ['service accounts'],
      querystring: Type.Object({ ...Paging }, { additionalProperties: false }),
      response: { 200: listOf(ServiceAccount) },
    },
    handler: async (request) => {
      const { limit = 50, cursor } = request.query;
      const rows = await listServiceAccounts(deps, inWorkspace(request).workspaceId, { limit: limit + 1, after: decodeCursor(cursor, idPosition('sa')) });
      return page(rows, limit, (row) => row.id, deps.config.pageBytes);
    },
  });

export const registerCreateServiceAccount: RegisterRoute = (app, deps) =>
  app.post('/v1/service-accounts', {
    config: { operation: 'serviceAccounts.create', access: MANAGE },
    schema: {
      summary: 'Create a service account (a machine user with a role, never owner)',
      tags: ['service accounts'],
      body: Type.Object({ name: DisplayName, role: AssignableRole }, { additionalProperties: false, examples: [{ name: 'billing sync', role: 'editor' }] }),
      response: { 201: ServiceAccount },
    },
    handler: async (request, reply) => reply.status(201).send(await createServiceAccount(deps, adminContext(request), request.body)),
  });

export const registerUpdateServiceAccount: RegisterRoute = (app, deps) =>
  app.patch('/v1/service-accounts/:sa', {
    config: { operation: 'serviceAccounts.update', access: MANAGE },
    schema: {
      summary: 'Rename a service account or change its role; its keys follow the new role at once',
      tags: ['service accounts'],
      params: Params,
      body: Type.Object({ name: Type.Optional(DisplayName), role: Type.Optional(AssignableRole) }, { additionalProperties: false, minProperties: 1, examples: [{ role: 'viewer' }] }),
      response: { 200: ServiceAccount },
    },
    handler: async (request) => updateServiceAccount(deps, adminContext(request), request.params.sa, request.body),
  });

export const registerDeleteServiceAccount: RegisterRoute = (app, deps) =>
  app.delete('/v1/service-accounts/:sa', {
    config: { operation: 'serviceAccounts.delete', access: MANAGE },
    schema: { summary: 'Delete a service account; its keys stop at once', tags: ['service accounts'], params: Params, response: { 204: NoContent } },
    handler: async (request, reply) => {
      await deleteServiceAccount(deps, adminContext(request), request.params.sa);
      return reply.status(204).send(null);
    },
  });
