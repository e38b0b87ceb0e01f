import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createOwner } from '../../src/modules/setup/first-owner.js';
import type { TestApp } from './harness.js';

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: LightMyRequestResponse['headers'];
}

/**
 * Talks to the app as one browser would: keeps the session cookie, names a workspace.
 * Without a cookie it is an anonymous caller.
 */
export class Client {
  cookie: string | null = null;
  workspaceId: string | null = null;
  /** The caller's address as the server sees it (request.ip); app.inject's default when unset. */
  remoteAddress: string | undefined = undefined;

  constructor(private readonly t: TestApp) {}

  async call<T = any>(method: InjectOptions['method'], url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply<T>> {
    const response = await this.t.app.inject({
      method,
      url,
      ...(this.remoteAddress ? { remoteAddress: this.remoteAddress } : {}),
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(this.cookie ? { cookie: `plainbase_session=${this.cookie}` } : {}),
        ...(this.workspaceId ? { 'x-baas-workspace': this.workspaceId } : {}),
        ...headers,
      },
      payload: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const setCookie = response.cookies.find((c) => c.name === 'plainbase_session');
    if (setCookie) this.cookie = setCookie.value || null;
    const text = response.body;
    const type = String(response.headers['content-type'] ?? '');
    return { status: response.statusCode, headers: response.headers, body: type.includes('json') && text ? JSON.parse(text) : text };
  }

  get = <T = any>(url: string, headers?: Record<string, string>) => this.call<T>('GET', url, undefined, headers);
  post = <T = any>(url: string, body: unknown = {}, headers?: Record<string, string>) => this.call<T>('POST', url, body, headers);
  patch = <T = any>(url: string, body: unknown, headers?: Record<string, string>) => this.call<T>('PATCH', url, body, headers);
  put = <T = any>(url: string, body: unknown, headers?: Record<string, string>) => this.call<T>('PUT', url, body, headers);
  delete = <T = any>(url: string, headers?: Record<string, string>) => this.call<T>('DELETE', url, undefined, { ...headers });

  async signIn(email: string, password: string): Promise<Reply> {
    const reply = await this.post('/v1/auth/sign-in', { email, password });
    if (reply.status === 200 && !this.workspaceId) this.workspaceId = reply.body.workspaces[0]?.id ?? null;
    return reply;
  }
}

/** A program calling with an API key. */
export class KeyClient extends Client {
  constructor(t: TestApp, private readonly secret: string) {
    super(t);
  }

  override call: Client['call'] = (method, url, body, headers = {}) => super.call(method, url, body, { authorization: `Bearer ${this.secret}`, ...headers });
}

export const OWNER = { email: 'owner@example.com', password: 'correct horse battery', name: 'Olive Owner' };

/** An owner with a workspace, signed in: the start of most tests. */
export async function signedInOwner(t: TestApp): Promise<Client & { personId: string }> {
  const { person, workspace } = await createOwner(t.deps, OWNER);
  const client = new Client(t) as Client & { personId: string };
  const reply = await client.signIn(OWNER.email, OWNER.password);
  if (reply.status !== 200) throw new Error(`owner sign-in failed: ${JSON.stringify(reply.body)}`);
  client.workspaceId = workspace.id;
  client.personId = person.id;
  return client;
}

/** The same signed-in caller, session and workspace, through another app (another process). */
export function sameSessionOn(t: TestApp, client: Client): Client {
  const other = new Client(t);
  other.cookie = client.cookie;
  other.workspaceId = client.workspaceId;
  return other;
}

/** The same signed-in person in a new workspace of their own: a second tenant beside the first. */
export async function inNewWorkspace(t: TestApp, person: Client, name: string): Promise<Client> {
  const created = await person.post('/v1/workspaces', { name });
  if (created.status !== 201) throw new Error(`creating a workspace failed: ${JSON.stringify(created.body)}`);
  const client = new Client(t);
  client.cookie = person.cookie;
  client.workspaceId = created.body.id;
  return client;
}

/** Invites someone with a role and has them accept; returns their signed-in client. */
export async function addMember(t: TestApp, admin: Client, email: string, role: 'admin' | 'editor' | 'viewer'): Promise<Client & { personId: string }> {
  const invite = await admin.post('/v1/invites', { email, role });
  if (invite.status !== 201) throw new Error(`invite failed: ${JSON.stringify(invite.body)}`);
  const member = new Client(t) as Client & { personId: string };
  const accepted = await member.post(`/v1/invites/${invite.body.token}/accept`, { name: email.split('@')[0], password: 'member password 1' });
  if (accepted.status !== 200) throw new Error(`accept failed: ${JSON.stringify(accepted.body)}`);
  member.workspaceId = admin.workspaceId;
  member.personId = accepted.body.person.id;
  return member;
}

/**
 * Asserts the one error envelope of docs/design.md §2: status, code, a message, and the request id
 * equal to the response's x-request-id header. Returns the error for further checks.
 */
export function expectError(reply: Reply, status: number, code: string): { code: string; message: string; requestId: string; details?: Record<string, any> } {
  const summary = { status: reply.status, body: reply.body };
  if (reply.status !== status || reply.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${JSON.stringify(summary)}`);
  }
  const { error } = reply.body;
  if (typeof error.message !== 'string' || error.message === '') throw new Error(`error without a message: ${JSON.stringify(summary)}`);
  if (typeof reply.headers['x-request-id'] !== 'string' || error.requestId !== reply.headers['x-request-id']) {
    throw new Error(`error requestId ${error.requestId} is not the x-request-id header ${String(reply.headers['x-request-id'])}`);
  }
  return error;
}

/** The attributes of the plainbase_session Set-Cookie header of a reply, or null when there is none. */
export function sessionSetCookie(reply: Reply): { value: string; attributes: Map<string, string> } | null {
  const raw = reply.headers['set-cookie'];
  const line = [raw ?? []].flat().find((header) => String(header).startsWith('plainbase_session='));
  if (!line) return null;
  const [pair, ...rest] = String(line).split(';').map((part) => part.trim());
  const attributes = new Map<string, string>();
  for (const part of rest) {
    const at = part.indexOf('=');
    attributes.set((at < 0 ? part : part.slice(0, at)).toLowerCase(), at < 0 ? '' : part.slice(at + 1));
  }
  return { value: pair!.slice('plainbase_session='.length), attributes };
}

/** Every audit entry matching `query`, following nextCursor to the end (newest first). */
export async function allAuditEntries(client: Client, query = '', pageSize = 1000): Promise<any[]> {
  const entries: any[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams(query);
    params.set('limit', String(pageSize));
    if (cursor) params.set('cursor', cursor);
    const reply: Reply = await client.get(`/v1/audit-log?${params}`);
    if (reply.status !== 200) throw new Error(`audit log: ${JSON.stringify(reply.body)}`);
    entries.push(...reply.body.data);
    cursor = reply.body.nextCursor;
  } while (cursor);
  return entries;
}
