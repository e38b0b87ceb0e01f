/** Roles an invite or a role change can give; ownership moves only by transfer. */
export const ASSIGNABLE_ROLES = ['admin', 'editor', 'viewer'] as const;
