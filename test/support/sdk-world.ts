import type { AddressInfo } from 'node:net';
import type { Config } from '../../src/config.js';
import type { Engine } from '../../src/db/dialect.js';
import { Client, signedInOwner } from './client.js';
import { startTestApp, type TestApp } from './harness.js';

/** A workspace as the SDK tests use it: its id, and a signed-in owner's client that issues keys in it. */
export interface Workspace {
  id: string;
  owner: Client;
  /** A new API key of the owner in this workspace, with these scopes. */
  key(scopes: string[], name?: string): Promise<string>;
}

export interface SdkWorld {
  t: TestApp;
  /** Where the app listens, on loopback: the SDK talks to it over real HTTP. */
  base: string;
  /** The first workspace, "default". */
  main: Workspace;
  /** One more workspace of the same owner, beside the first. */
  addWorkspace(name: string): Promise<Workspace>;
  close(): Promise<void>;
}

function workspaceOf(t: TestApp, cookie: string | null, id: string): Workspace {
  const owner = new Client(t);
  owner.cookie = cookie;
  owner.workspaceId = id;
  return {
    id,
    owner,
    key: async (scopes, name = 'sdk test') => {
      const reply = await owner.post('/v1/keys', { name, scopes });
      if (reply.status !== 201) throw new Error(`key: ${JSON.stringify(reply.body)}`);
      return reply.body.secret as string;
    },
  };
}

/** The app on a fresh database of the engine, listening on 127.0.0.1, with an owner signed in. */
export async function startSdkWorld(engine: Engine, overrides: Partial<Config> = {}): Promise<SdkWorld> {
  const t = await startTestApp(engine, overrides);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  const owner = await signedInOwner(t);
  return {
    t,
    base: `http://127.0.0.1:${port}`,
    main: workspaceOf(t, owner.cookie, owner.workspaceId!),
    addWorkspace: async (name) => {
      const reply = await owner.post('/v1/workspaces', { name });
      if (reply.status !== 201) throw new Error(`workspace: ${JSON.stringify(reply.body)}`);
      return workspaceOf(t, owner.cookie, reply.body.id);
    },
    close: () => t.close(),
  };
}
