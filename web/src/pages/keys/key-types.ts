/** What the /v1/keys routes answer (docs/api-keys.md "Seeing keys"). Never the secret, except right after creating or rotating. */
export interface ApiKey {
  id: string;
  name: string;
  mode: 'live' | 'test';
  preview: string;
  scopes: string[];
  collections: string[] | null;
  expiresAt: string | null;
  serviceAccountId: string | null;
  createdBy: string;
  createdAt: string;
  lastUsedAt: string | null;
  lastUsedIp: string | null;
  state: 'active' | 'expired' | 'revoked';
}

export interface ApiKeyWithSecret extends ApiKey {
  secret: string;
}

export interface ServiceAccount {
  id: string;
  name: string;
  role: 'admin' | 'editor' | 'viewer';
  createdBy: string;
  createdAt: string;
}

/** Enough of a collection to pick it and to show its name. */
export interface CollectionRef {
  id: string;
  name: string;
}
