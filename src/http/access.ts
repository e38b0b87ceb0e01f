import type { Ability } from '../abilities.js';

/** The further ability a request needs, from its query string as received (not yet validated). */
export type AlsoNeeds = (query: unknown) => Ability | null;

/**
 * What a route needs from its caller; every route declares one (`config.access`), and the app
 * refuses to start with a route that does not.
 * - open: no credential (health, sign-in, accepting an invite).
 * - person: a signed-in person, no workspace (their session, their workspaces).
 * - member: any caller of a workspace (a person or a key), whatever its abilities (GET /v1/me).
 * - workspace: a caller in the workspace holding `ability`; `publicRead` routes also answer
 *   anonymous callers when the collection is public; `publicSubmit` routes (a record's create) let anonymous
 *   callers through to the submission gate (public-submission.ts). `alsoNeeds` names a further ability that
 *   some requests need (DELETE with ?permanent=true needs records:purge): the route checks it,
 *   and a key is refused PERSON_REQUIRED for it before any scope is looked at (docs/design.md §4, rule 2).
 *   `checksKeyInStatement`: every statement the route runs carries the key guard of a guessed key
 *   (modules/keys/key-guess.ts) or runs after confirming it, so a request with a key this process
 *   has read before may start without reading it again (where statements are round trips).
 */
export type Access =
  | { kind: 'open' }
  | { kind: 'person' }
  | { kind: 'member' }
  | { kind: 'workspace'; ability: Ability; publicRead?: boolean; publicSubmit?: boolean; alsoNeeds?: AlsoNeeds; checksKeyInStatement?: boolean };

export const OPEN: Access = { kind: 'open' };
export const PERSON: Access = { kind: 'person' };
export const MEMBER: Access = { kind: 'member' };
export const needs = (ability: Ability, options: { publicRead?: boolean; publicSubmit?: boolean; alsoNeeds?: AlsoNeeds; checksKeyInStatement?: boolean } = {}): Access => ({ kind: 'workspace', ability, ...options });

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A stable name for logs, metrics and the OpenAPI operationId, like `members.update`. */
    operation?: string;
    access?: Access;
  }
}
