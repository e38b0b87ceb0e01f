import { Type } from 'typebox';
import { MAX_GRACE_SECONDS, rotateKey } from '../../../modules/keys/keys.js';
import { needs } from '../../access.js';
import type { RegisterRoute } from '../../app-type.js';
import { KeyParams, KeyWithSecret, keyManager } from './key-schemas.js';

export const registerRotateKey: RegisterRoute = (app, deps) =>
  app.post('/v1/keys/:key/rotate', {
    config: { operation: 'keys.rotate', access: needs('keys:create-own') },
    schema: {
      summary: 'New secret, same key; the old secret keeps working for the grace period (0 = stops now, at most 7 days)',
      tags: ['keys'],
      params: KeyParams,
      body: Type.Object({ gracePeriodSeconds: Type.Integer({ minimum: 0, maximum: MAX_GRACE_SECONDS }) }, { additionalProperties: false, examples: [{ gracePeriodSeconds: 3600 }] }),
      response: { 200: KeyWithSecret },
    },
    handler: async (request) => {
      const { key, secret } = await rotateKey(deps, keyManager(request), request.params.key, request.body.gracePeriodSeconds);
      return { ...key, secret };
    },
  });
