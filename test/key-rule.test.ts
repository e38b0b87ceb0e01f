import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { boundCondition } from '../src/db/bound-condition.js';
import { holds, KEY_GUARD, KEY_RULE, keyConditionSql, keyRefusal, ruleValues, type Condition, type KeyRuleParameters, type KeyView } from '../src/modules/keys/key-rule.js';
import { hashToken, parseToken } from '../src/modules/keys/token.js';
import { addMember, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * The key rule is said once (src/modules/keys/key-rule.ts), and both the TypeScript check and
 * the SQL of the key guard are made from it. This holds the two to the same answer: random
 * states of a key's rows (revoked or not, expired or not, a secret past its grace or not, its
 * creator's role changed or gone, its service account demoted or deleted) against random
 * parameters (the right secret or another, the right mode or not, a guess that saw the same key
 * or not), the rule and the whole guard each evaluated in TypeScript on the rows read back, and
 * by the database in SQL, on both engines.
 */

const RUNS = Number(process.env.PLAINBASE_TEST_KEY_RULE_RUNS ?? 150);
const HOUR_MS = 3600_000;
const ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;

/** True four times in five: draws that pass every clause must be common enough to be met. */
const mostly = fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });
const offset = fc.option(fc.constantFrom(-2 * HOUR_MS, -1, 1, 2 * HOUR_MS), { nil: null, freq: 2 });
const state = fc.record({
  byAccount: fc.boolean(),
  revoked: mostly.map((no) => !no),
  keyExpires: offset,
  secretExpires: offset,
  /** The member's role, or removed; the account's role, or deleted. */
  role: fc.option(fc.constantFrom(...ROLES.slice(1)), { nil: null, freq: 5 }),
  rightSecret: mostly,
  rightMode: mostly,
  guess: fc.record({
    sameName: mostly,
    sameScopes: mostly,
    sameExpiry: mostly,
    sameWorkspace: mostly,
    /** null: the role the rows hold. */
    role: fc.option(fc.constantFrom(...ROLES), { nil: null }),
  }),
});

describeEachEngine('the key rule, in TypeScript and in SQL', (engine) => {
  let t: TestApp;
  let keys: { byMember: Made; byAccount: Made };
  /** The member's membership row while it is removed, to put back. */
  let removed: any = null;
  interface Made {
    id: string;
    secret: string;
    personId: string | null;
    accountId: string | null;
  }

  beforeAll(async () => {
    t = await startTestApp(engine);
    const owner = await signedInOwner(t);
    const member = await addMember(t, owner, 'member@example.com', 'editor');
    const byMember = (await member.post('/v1/keys', { name: 'by member', scopes: ['records:read'] })).body;
    const account = (await owner.post('/v1/service-accounts', { name: 'robot', role: 'editor' })).body;
    const byAccount = (await owner.post('/v1/keys', { name: 'by account', scopes: ['records:read'], serviceAccountId: account.id })).body;
    keys = {
      byMember: { id: byMember.id, secret: byMember.secret, personId: member.personId, accountId: null },
      byAccount: { id: byAccount.id, secret: byAccount.secret, personId: null, accountId: account.id },
    };
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  /** The key's rows as the key check reads them. */
  async function viewOf(keyId: string): Promise<KeyView> {
    const key = await t.deps.db.selectFrom('api_keys').selectAll().where('id', '=', keyId).executeTakeFirstOrThrow();
    const secrets = await t.deps.db.selectFrom('api_key_secrets').select(['secret_hash', 'expires_at']).where('key_id', '=', keyId).execute();
    const role = key.service_account_id
      ? (await t.deps.db.selectFrom('service_accounts').select('role').where('id', '=', key.service_account_id).where('deleted_at', 'is', null).executeTakeFirst())?.role
      : (await t.deps.db.selectFrom('memberships').select('role').where('workspace_id', '=', key.workspace_id).where('person_id', '=', key.created_by).executeTakeFirst())?.role;
    return { key, secrets, role: role ?? null };
  }

  /** Whether the database finds the condition true for the key, its parameters bound. */
  async function inSql(condition: Condition, parameters: KeyRuleParameters): Promise<boolean> {
    const built = boundCondition((marker) => keyConditionSql(condition, marker, 0), ruleValues);
    const { rows } = await sql<{ held: number }>`select case when ${built.condition(parameters)} then 1 else 0 end as held`.execute(t.deps.db);
    return Number(rows[0]!.held) === 1;
  }

  it('answers the same for the rule and for the whole guard, whatever the rows and the parameters', async () => {
    const seen = { ruleHeld: 0, ruleRefused: 0, guardHeld: 0 };
    await fc.assert(
      fc.asyncProperty(state, async (s) => {
        const made = s.byAccount ? keys.byAccount : keys.byMember;
        const now = t.clock.now().getTime();
        const at = (delta: number | null) => (delta === null ? null : new Date(now + delta).toISOString());
        // The rows in the drawn state, written directly: what any process might have done.
        await t.deps.db.updateTable('api_keys').set({ revoked_at: s.revoked ? at(-1) : null, expires_at: at(s.keyExpires) }).where('id', '=', made.id).execute();
        await t.deps.db.updateTable('api_key_secrets').set({ expires_at: at(s.secretExpires) }).where('key_id', '=', made.id).execute();
        if (made.accountId) {
          await t.deps.db.updateTable('service_accounts').set({ role: s.role ?? 'viewer', deleted_at: s.role === null ? at(-1) : null }).where('id', '=', made.accountId).execute();
        } else {
          // A removed member is one whose membership row is gone; it is put back for the next draw.
          const membership = await t.deps.db.selectFrom('memberships').selectAll().where('person_id', '=', made.personId!).executeTakeFirst();
          if (s.role === null && membership) await t.deps.db.deleteFrom('memberships').where('person_id', '=', made.personId!).execute();
          if (s.role !== null && membership) await t.deps.db.updateTable('memberships').set({ role: s.role }).where('person_id', '=', made.personId!).execute();
          if (s.role !== null && !membership) await t.deps.db.insertInto('memberships').values({ ...removed, role: s.role }).execute();
          if (s.role === null && membership) removed = membership;
        }
        const view = await viewOf(made.id);
        const parsed = parseToken(made.secret)!;
        const parameters: KeyRuleParameters = {
          keyId: made.id,
          mode: s.rightMode ? parsed.mode : parsed.mode === 'live' ? 'test' : 'live',
          secretHash: hashToken(s.rightSecret ? made.secret : `${made.secret}x`, t.deps.config.keyPepper),
          now: new Date(now).toISOString(),
          workspaceId: s.guess.sameWorkspace ? view.key.workspace_id! : 'wsp_other',
          name: s.guess.sameName ? view.key.name! : 'another name',
          scopes: s.guess.sameScopes ? view.key.scopes! : '["records:create"]',
          expiresAt: s.guess.sameExpiry ? view.key.expires_at : at(3 * HOUR_MS),
          role: s.guess.role ?? view.role ?? 'viewer',
        };
        const rule: Condition = { all: KEY_RULE.map((clause) => clause.holds) };
        const ruleInTs = keyRefusal(view, parameters) === null;
        expect(holds(rule, view, parameters)).toBe(ruleInTs);
        expect(await inSql(rule, parameters), JSON.stringify(s)).toBe(ruleInTs);
        const guardInTs = holds(KEY_GUARD, view, parameters);
        expect(await inSql(KEY_GUARD, parameters), JSON.stringify(s)).toBe(guardInTs);
        if (ruleInTs) seen.ruleHeld += 1;
        else seen.ruleRefused += 1;
        if (guardInTs) seen.guardHeld += 1;
      }),
      { numRuns: RUNS, seed: 20261129 },
    );
    // Both answers were met: the test is no check that cannot fail.
    expect(seen.ruleHeld).toBeGreaterThan(0);
    expect(seen.ruleRefused).toBeGreaterThan(0);
    expect(seen.guardHeld).toBeGreaterThan(0);
  }, 120_000);

});
