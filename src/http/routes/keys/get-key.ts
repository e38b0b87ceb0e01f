import { getKey } from '../../../modules/keys/keys.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { Key, KeyParams, keyManager } from './key-schemas.js';

export const registerGetKey: RegisterRoute = (app, deps) =>
  app.get('/v1/keys/:key', {
    config: { operation: 'keys.get', access: needs('keys:create-own') },
    schema: { summary: 'One key (never its secret)', tags: ['keys'], params: KeyParams, response: { 200: Key } },
    handler: async (request) => getKey(deps, keyManager(request), request.params.key),
  });
