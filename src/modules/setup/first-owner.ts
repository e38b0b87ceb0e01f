import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';
import type { Executor } from '../../db/schema.js';
import { randomToken, sha256Hex } from '../../secrets.js';
import type { RequestMeta } from '../audit/audit.js';
import { createSession, type NewSession } from '../sessions/sessions.js';
import { insertWorkspace, type WorkspaceView } from '../workspaces/workspaces.js';
import { countPeople, insertPerson, type Person } from '../people/people.js';

const SYSTEM_META: RequestMeta = { ip: null, userAgent: null, requestId: null };
const SYSTEM = { type: 'system' as const, id: null, name: 'plainbase' };

/** A person and a workspace they own, made together (owner bootstrap, setup page, CLI). */
export async function createOwner(
  deps: Deps,
  input: { email: string; name?: string; password: string; workspaceName?: string },
  meta: RequestMeta = SYSTEM_META,
): Promise<{ person: Person; workspace: WorkspaceView }> {
  return deps.db.transaction().execute((trx) => insertOwner(trx, deps, input, meta));
}

async function insertOwner(
  executor: Executor,
  deps: Deps,
  input: { email: string; name?: string; password: string; workspaceName?: string },
  meta: RequestMeta,
): Promise<{ person: Person; workspace: WorkspaceView }> {
  const name = input.name?.trim() || input.email.split('@')[0]!;
  const now = deps.clock.now();
  const person = await insertPerson(executor, { email: input.email, name, password: input.password }, now, deps.config.passwordHashCost);
  const workspace = await insertWorkspace(executor, now, meta, person, input.workspaceName ?? 'default', SYSTEM);
  return { person, workspace };
}

/**
 * At start: with PLAINBASE_OWNER_* set and nobody yet, make that owner. Otherwise, while nobody
 * exists, issue a one-time setup token (a fresh one each start) and return it for the link.
 */
export async function prepareFirstOwner(deps: Deps): Promise<{ created: Person | null; setupToken: string | null }> {
  if ((await countPeople(deps.db)) > 0) return { created: null, setupToken: null };
  if (deps.config.owner) {
    const { person } = await createOwner(deps, deps.config.owner);
    return { created: person, setupToken: null };
  }
  const token = randomToken();
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('setup_tokens').execute();
    await trx.insertInto('setup_tokens').values({ token_hash: sha256Hex(token), created_at: deps.clock.now().toISOString() }).execute();
  });
  return { created: null, setupToken: token };
}

export async function isSetupPending(deps: Deps): Promise<boolean> {
  return (await countPeople(deps.db)) === 0;
}

/** The setup page's form: only with the printed token, and only while nobody exists. */
export async function completeSetup(
  deps: Deps,
  input: { token: string; email: string; name: string; password: string },
  meta: RequestMeta,
): Promise<{ person: Person; workspace: WorkspaceView; session: NewSession }> {
  return deps.db.transaction().execute(async (trx) => {
    // Deleting the token claims it: of two concurrent setups, only one deletes a row.
    const claimed = await trx.deleteFrom('setup_tokens').where('token_hash', '=', sha256Hex(input.token)).executeTakeFirst();
    if (Number(claimed.numDeletedRows) === 0) {
      throw new AppError('NOT_FOUND', 'This setup link is not valid; use the link printed by the server at its last start.');
    }
    if ((await countPeople(trx)) > 0) throw new AppError('CONFLICT', 'Setup is already done; sign in instead.');
    const { person, workspace } = await insertOwner(trx, deps, input, meta);
    const session = await createSession(trx, deps, person.id, meta);
    return { person, workspace, session };
  });
}
