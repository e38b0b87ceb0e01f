export interface Member {
  personId: string;
  email: string;
  name: string;
  role: 'owner' | 'admin' | 'editor' | 'viewer';
  joinedAt: string;
}

export interface Invite {
  id: string;
  email: string;
  role: 'admin' | 'editor' | 'viewer';
  createdAt: string;
  expiresAt: string;
  invitedBy: string;
  /** Only in the answer that creates it. */
  url?: string;
}

/** Roles an invite or a role change can give; ownership moves only by transfer. */
export const ASSIGNABLE_ROLES = ['admin', 'editor', 'viewer'] as const;
