import { Type } from 'typebox';
import { scopesOfKey, scopesOfPerson } from '../../../modules/keys/caller-scopes.js';
import { MEMBER } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { exampleId, RoleName, Timestamp } from '../../schemas.js';
import { KeyMode, ScopeName } from '../keys/key-schemas.js';

const Me = Type.Object({
  workspaceId: Type.String(),
  key: Type.Union([Type.Object({ id: Type.String(), name: Type.String(), mode: Type.Unsafe<string>({ ...KeyMode }) }), Type.Null()]),
  person: Type.Union([Type.Object({ id: Type.String(), email: Type.String(), name: Type.String() }), Type.Null()]),
  role: { ...RoleName, description: "The role the caller answers to now: a person's own, or that of the key's creator or service account." },
  grantedScopes: Type.Array(ScopeName),
  effectiveScopes: Type.Array(ScopeName, { description: 'The granted scopes the role allows now.' }),
  suppressed: Type.Array(Type.Object({ scope: ScopeName, reason: Type.String() }), { description: 'Granted scopes the role no longer allows, and why.' }),
  collections: Type.Union([Type.Array(Type.String()), Type.Null()]),
  expiresAt: Type.Union([Timestamp, Type.Null()]),
}, {
  examples: [{
    workspaceId: exampleId('ws'),
    key: { id: exampleId('key'), name: 'nightly import', mode: 'live' },
    person: null,
    role: 'viewer',
    grantedScopes: ['records:read', 'records:create'],
    effectiveScopes: ['records:read'],
    suppressed: [{ scope: 'records:create', reason: "the creator's role (viewer) no longer allows it" }],
    collections: null,
    expiresAt: null,
  }],
});

export const registerGetMe: RegisterRoute = (app) =>
  app.get('/v1/me', {
    config: { operation: 'me.get', access: MEMBER },
    schema: {
      summary: 'Who is calling: the key (or person), its workspace, granted and effective scopes, and why any is suppressed',
      tags: ['keys'],
      response: { 200: Me },
    },
    handler: async (request) => {
      const { workspaceId, person, role } = inWorkspace(request);
      const key = request.auth.key;
      if (!key) {
        return { workspaceId, key: null, person, role, ...scopesOfPerson(role), collections: null, expiresAt: null };
      }
      return {
        workspaceId,
        key: { id: key.key.id, name: key.key.name, mode: key.key.mode },
        person: null,
        role,
        ...scopesOfKey(key),
        collections: key.collections,
        expiresAt: key.key.expires_at,
      };
    },
  });
