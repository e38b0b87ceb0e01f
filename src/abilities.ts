/**
 * Who may do what (docs/design.md §4), as data. Every route declares the ability it needs and
 * `roleAllows` is the one place that decides for a role.
 */

/** The twelve scopes of docs/design.md §4: what a key may be granted. */
export const SCOPES = [
  'collections:read',
  'collections:create',
  'collections:update',
  'collections:delete',
  'records:read',
  'records:create',
  'records:update',
  'records:delete',
  'schemas:read',
  'schemas:write',
  'files:read',
  'files:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Abilities only a signed-in person can use, whatever a key's scopes (docs/design.md §4, rule 2). */
export const PERSON_ONLY_ABILITIES = [
  'members:read',
  'members:manage',
  'keys:create-own',
  'keys:manage',
  'service-accounts:manage',
  'webhooks:manage',
  'indexes:manage',
  'records:purge',
  'audit:read',
  'workspace:transfer',
  'workspace:delete',
] as const;
export type PersonOnlyAbility = (typeof PERSON_ONLY_ABILITIES)[number];

export type Ability = Scope | PersonOnlyAbility;

export const ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

const READ: Ability[] = ['collections:read', 'records:read', 'schemas:read', 'files:read', 'members:read', 'keys:create-own'];
const WRITE: Ability[] = [
  'records:create', 'records:update', 'records:delete', 'files:write',
  'collections:create', 'collections:update', 'collections:delete', 'schemas:write',
];
const ADMINISTER: Ability[] = [
  'keys:manage', 'service-accounts:manage', 'webhooks:manage', 'indexes:manage',
  'members:manage', 'records:purge', 'audit:read',
];
const OWN: Ability[] = ['workspace:transfer', 'workspace:delete'];

export const ROLE_ABILITIES: Record<Role, ReadonlySet<Ability>> = {
  owner: new Set([...READ, ...WRITE, ...ADMINISTER, ...OWN]),
  admin: new Set([...READ, ...WRITE, ...ADMINISTER]),
  editor: new Set([...READ, ...WRITE]),
  viewer: new Set(READ),
};

/** Which role outranks which: a person may not take over what acts with a higher role (docs/security.md). */
export const ROLE_RANK: Record<Role, number> = { viewer: 0, editor: 1, admin: 2, owner: 3 };

export function roleAllows(role: Role, ability: Ability): boolean {
  return ROLE_ABILITIES[role].has(ability);
}

export function isPersonOnly(ability: Ability): ability is PersonOnlyAbility {
  return (PERSON_ONLY_ABILITIES as readonly string[]).includes(ability);
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}
