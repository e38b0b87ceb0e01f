import { revokeKey } from '../../../modules/keys/keys.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { Key, KeyParams, keyManager } from './key-schemas.js';

export const registerRevokeKey: RegisterRoute = (app, deps) =>
  app.post('/v1/keys/:key/revoke', {
    config: { operation: 'keys.revoke', access: needs('keys:create-own') },
    schema: { summary: 'Stop the key at once, every secret of it; this cannot be undone', tags: ['keys'], params: KeyParams, response: { 200: Key } },
    handler: async (request) => revokeKey(deps, keyManager(request), request.params.key),
  });
