import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { readClipboard } from './support/browser.js';
import { startDashboard, type Dashboard } from './support/dashboard.js';

/**
 * People, in Chromium against the real service: the owner invites someone and copies the link;
 * the invited person, in their own browser, accepts as a new person; the owner changes their role
 * and then removes them, each time seen from both sides.
 */
describe.skipIf(!inject('chromiumPresent'))('people in the browser', () => {
  let d: Dashboard;
  let guestContext: BrowserContext;
  let guest: Page;
  let inviteUrl: string;
  const newcomer = { name: 'Nia Newcomer', email: 'nia@example.com', password: 'newcomer password 1' };

  beforeAll(async () => {
    // At info level the service logs a line per answered request, which a failure prints.
    d = await startDashboard({ env: { PLAINBASE_LOG_LEVEL: 'info' } });
    guestContext = await d.newContext();
    guest = await guestContext.newPage();
  }, 60_000);

  afterAll(async () => {
    await d?.stop();
  });

  beforeEach(() => d.explainFailure([d.page, guest]));

  const memberRow = (page: Page, name: string) => page.getByRole('row').filter({ hasText: name });

  it('invites someone and copies the link', async () => {
    const { page } = d;
    await page.getByRole('link', { name: 'People' }).click();
    await page.getByRole('heading', { name: 'People', level: 1 }).waitFor();
    await page.getByLabel('Email to invite').fill(newcomer.email);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Create invite link' }).click();

    const shown = await page.getByLabel('Invite link', { exact: true }).textContent();
    expect(shown).toMatch(new RegExp(`^${d.baseUrl}/invite/[A-Za-z0-9_-]+$`));
    await page.getByRole('button', { name: 'Copy invite link' }).click();
    await page.getByText('Copied.').waitFor();
    inviteUrl = await readClipboard(page);
    expect(inviteUrl).toBe(shown);
    await expect(memberRow(page, newcomer.email).textContent()).resolves.toContain('viewer');
    await d.shot('people-invite-created');
  });

  it('lets the invited person join as someone new, with only what a viewer may use', async () => {
    await guest.goto(inviteUrl);
    await guest.getByRole('heading', { name: 'You are invited' }).waitFor();
    // The page names who invited, where to and as what, read from the link before accepting.
    await guest.getByText(`${d.owner.name} invited you to default as a viewer.`).waitFor();
    await guest.getByText(`The invite is for ${newcomer.email}`).waitFor();
    await guest.getByLabel('Your name').fill(newcomer.name);
    await guest.getByLabel('Choose a password').fill(newcomer.password);
    await d.shot('invite-accept', guest);
    await guest.getByRole('button', { name: 'Accept invite' }).click();
    await guest.getByRole('navigation', { name: 'Main' }).waitFor();

    const nav = await guest.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    expect(nav).toContain('People');
    for (const hidden of ['Audit log', 'Webhooks', 'Service accounts']) expect(nav).not.toContain(hidden);
    await expect(guest.getByLabel('Workspace', { exact: true }).locator('option:checked').textContent()).resolves.toBe('default (viewer)');

    // A viewer sees the members but is offered no way to change them.
    await guest.getByRole('link', { name: 'People' }).click();
    await memberRow(guest, newcomer.email).waitFor();
    expect(await guest.getByRole('button', { name: /^Remove / }).count()).toBe(0);
    expect(await guest.getByRole('heading', { name: 'Invites' }).count()).toBe(0);
    await d.shot('people-as-viewer', guest);

    // A page the role cannot use says so instead of failing.
    await guest.goto('/audit-log');
    await guest.getByRole('heading', { name: 'Not available to your role' }).waitFor();
  });

  it('changes the new member’s role', async () => {
    const { page } = d;
    await page.reload();
    await memberRow(page, newcomer.email).waitFor();
    // The accepted invite is no longer waiting.
    await page.getByText('No invites are waiting.').waitFor();
    // Newest first: the member who just joined heads the list, before the owner.
    await expect(page.getByRole('table', { name: /^Members of/ }).locator('tbody tr').first().textContent()).resolves.toContain(newcomer.email);
    await page.getByLabel(`Role of ${newcomer.name}`).selectOption('editor');
    await page.getByText(`${newcomer.name} is now an editor.`).waitFor();
    await d.shot('people-members');

    await guest.goto('/members');
    await memberRow(guest, newcomer.email).waitFor();
    await expect(guest.getByLabel('Workspace', { exact: true }).locator('option:checked').textContent()).resolves.toBe('default (editor)');
  });

  it('revokes an invite after asking', async () => {
    const { page } = d;
    await page.getByLabel('Email to invite').fill('never@example.com');
    await page.getByRole('button', { name: 'Create invite link' }).click();
    await page.getByRole('button', { name: 'Revoke the invite for never@example.com' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this invite?' });
    await expect(dialog.textContent()).resolves.toContain('never@example.com will stop working');
    const revokedLink = await page.getByLabel('Invite link', { exact: true }).textContent();
    await dialog.getByRole('button', { name: 'Revoke invite' }).click();
    await page.getByText('No invites are waiting.').waitFor();
    // The revoked link says it no longer works, and offers no form.
    await guest.goto(revokedLink!);
    await guest.getByText('This invite link is not valid').waitFor();
    expect(await guest.getByRole('button', { name: 'Accept invite' }).count()).toBe(0);
    await guest.goto('/members');
    await guest.getByRole('heading', { name: 'People', level: 1 }).waitFor();
  });

  it('removes the member after a confirmation that names what they lose', async () => {
    const { page } = d;
    await page.getByRole('button', { name: `Remove ${newcomer.name}` }).click();
    const dialog = page.getByRole('dialog', { name: `Remove ${newcomer.name}?` });
    await expect(dialog.textContent()).resolves.toContain('will lose access to default');
    await d.shot('people-remove-confirm');

    // Cancel first: nothing happens.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await memberRow(page, newcomer.email).count()).toBe(1);

    await page.getByRole('button', { name: `Remove ${newcomer.name}` }).click();
    await dialog.getByRole('button', { name: 'Remove member' }).click();
    await page.getByText(`${newcomer.name} was removed from default.`).waitFor();
    await memberRow(page, newcomer.email).waitFor({ state: 'detached' });

    // The removed person, with no workspace left, is sent to create one.
    await guest.reload();
    await guest.getByRole('heading', { name: 'New workspace' }).waitFor();
    await guest.getByText('You are not a member of any workspace.').waitFor();

    // The audit log has both changes, filtered by action, newest first, one page at a time.
    await page.goto('/audit-log?action=member.*&limit=1');
    await page.getByRole('cell', { name: 'member.removed' }).waitFor();
    expect(await page.getByRole('cell', { name: 'member.role_changed' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.getByRole('cell', { name: 'member.role_changed' }).waitFor();
    // Two entries in all: after the second page there is nothing more to load.
    await page.getByRole('button', { name: 'Load more' }).waitFor({ state: 'detached' });
    expect(await page.getByRole('row').count()).toBe(3);
    await d.shot('audit-log-filtered');
  });

  it('lets someone with an account accept with their password, and hands the workspace over', async () => {
    const { page } = d;
    await page.goto('/members');
    await page.getByLabel('Email to invite').fill(newcomer.email);
    await page.getByLabel('Role', { exact: true }).selectOption('admin');
    await page.getByRole('button', { name: 'Create invite link' }).click();
    const link = await page.getByLabel('Invite link', { exact: true }).textContent();

    // Nia already has an account: trying to join as someone new says so and asks for the password.
    await guest.goto(link!);
    await guest.getByLabel('Your name').fill('Another Nia');
    await guest.getByLabel('Choose a password').fill('some other password');
    await guest.getByRole('button', { name: 'Accept invite' }).click();
    await expect(guest.getByRole('alert').textContent()).resolves.toContain('already have an account');
    expect(await guest.getByRole('radio', { name: 'Yes, I already have an account' }).isChecked()).toBe(true);
    await guest.getByLabel('Your password').fill(newcomer.password);
    await guest.getByRole('button', { name: 'Accept invite' }).click();
    await guest.getByRole('navigation', { name: 'Main' }).waitFor();
    await expect(guest.getByLabel('Workspace', { exact: true }).locator('option:checked').textContent()).resolves.toBe('default (admin)');

    await page.reload();
    await page.getByLabel('New owner').selectOption({ label: `${newcomer.name} (${newcomer.email})` });
    await page.getByRole('button', { name: 'Transfer ownership…' }).click();
    const dialog = page.getByRole('dialog', { name: `Make ${newcomer.name} the owner?` });
    await expect(dialog.textContent()).resolves.toContain('You become an admin');
    await dialog.getByRole('button', { name: 'Transfer ownership' }).click();
    await page.getByRole('heading', { name: 'Transfer ownership' }).waitFor({ state: 'detached' });
    await expect(page.getByLabel('Workspace', { exact: true }).locator('option:checked').textContent()).resolves.toBe('default (admin)');
    await expect(memberRow(page, newcomer.email).textContent()).resolves.toContain('owner');
  });
});
