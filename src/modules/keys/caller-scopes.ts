import { roleAllows, SCOPES, type Role, type Scope } from '../../abilities.js';
import type { KeyCaller } from './authenticate-key.js';

/** What a caller may do, as /v1/me reports it: the scopes granted, those in effect now, and why any is not. */
export interface CallerScopes {
  grantedScopes: Scope[];
  effectiveScopes: Scope[];
  suppressed: { scope: Scope; reason: string }[];
}

/** A signed-in person: every scope their role allows, all in effect. */
export function scopesOfPerson(role: Role): CallerScopes {
  const scopes = SCOPES.filter((scope) => roleAllows(role, scope));
  return { grantedScopes: scopes, effectiveScopes: scopes, suppressed: [] };
}

/** A key: the scopes it was granted, in their order, those its role still allows, and the rest with the reason. */
export function scopesOfKey(caller: KeyCaller): CallerScopes {
  return {
    grantedScopes: caller.granted,
    effectiveScopes: caller.granted.filter((scope) => caller.effective.has(scope)),
    suppressed: caller.suppressed,
  };
}
