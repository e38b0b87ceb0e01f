import { callJson, expectStatus } from './http.js';

/** The owner every bench starts Plainbase with (PLAINBASE_OWNER_*) and signs in as. */
export const OWNER = { email: 'bench@example.com', password: 'benchmark password 1' };

/** The settings that make a fresh server create OWNER and a workspace "default" at its first start. */
export const OWNER_ENV: Record<string, string> = { PLAINBASE_OWNER_EMAIL: OWNER.email, PLAINBASE_OWNER_PASSWORD: OWNER.password };

export interface Session extends Record<string, string> {
  cookie: string;
  'x-baas-workspace': string;
}

/** Signs in as OWNER: the session cookie and the owner's workspace, as headers for the next calls. */
export async function signInOwner(baseUrl: string): Promise<Session> {
  const reply = expectStatus(await callJson(baseUrl, 'POST', '/v1/auth/sign-in', {}, OWNER), 200, 'signing in');
  const cookie = reply.headers.getSetCookie().map((line) => line.split(';')[0]!).find((pair) => pair.startsWith('plainbase_session='));
  const workspaceId = (reply.body as { workspaces?: { id: string }[] }).workspaces?.[0]?.id;
  if (!cookie || !workspaceId) throw new Error(`sign-in gave no session cookie or workspace: ${JSON.stringify(reply.body)}`);
  return { cookie, 'x-baas-workspace': workspaceId };
}
