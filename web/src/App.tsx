import type { ComponentType } from 'react';
import { AccountPage } from './pages/account/AccountPage.js';
import type { Role } from '../../src/abilities.js';
import { AuditLogPage } from './pages/audit/AuditLogPage.js';
import { BackupsPage } from './pages/backups/BackupsPage.js';
import { InvitePage } from './pages/auth/InvitePage.js';
import { SetupPage } from './pages/auth/SetupPage.js';
import { SignInPage } from './pages/auth/SignInPage.js';
import { CollectionPage } from './pages/data/CollectionPage.js';
import { CollectionsPage } from './pages/data/CollectionsPage.js';
import { FilesPage } from './pages/data/FilesPage.js';
import { IndexesPage } from './pages/data/IndexesPage.js';
import { SummaryPage } from './pages/data/SummaryPage.js';
import { RecordsPage } from './pages/data/RecordsPage.js';
import { SchemasPage } from './pages/data/SchemasPage.js';
import { TrashPage } from './pages/data/TrashPage.js';
import { KeysPage } from './pages/keys/KeysPage.js';
import { MembersPage } from './pages/people/MembersPage.js';
import { ServiceAccountsPage } from './pages/service-accounts/ServiceAccountsPage.js';
import { WebhookPage } from './pages/webhooks/WebhookPage.js';
import { WebhooksPage } from './pages/webhooks/WebhooksPage.js';
import { NewWorkspacePage } from './pages/workspaces/NewWorkspacePage.js';
import { matchPath, RouteParams, useLocation } from './router.js';
import { Layout, type NavEntry } from './ui/Layout.js';
import { RouteGate } from './ui/RouteGate.js';

/**
 * Every page of the dashboard. `public` pages need no session; the others render inside the
 * signed-in layout and, with `ability`, only for roles that have it (src/abilities.ts), with `roles`
 * only for those roles (what no ability names, like the owners' backups).
 * `workspace: false` pages work before any workspace exists. One line per page.
 */
export interface Route {
  path: string;
  page: ComponentType;
  public?: boolean;
  ability?: string;
  roles?: readonly Role[];
  workspace?: false;
}

export const routes: Route[] = [
  { path: '/setup', page: SetupPage, public: true },
  { path: '/sign-in', page: SignInPage, public: true },
  { path: '/invite/:token', page: InvitePage, public: true },
  { path: '/workspaces/new', page: NewWorkspacePage, workspace: false },
  { path: '/account', page: AccountPage, workspace: false },
  { path: '/', page: CollectionsPage, ability: 'collections:read' },
  { path: '/collections/:name', page: CollectionPage, ability: 'collections:read' },
  { path: '/collections/:name/records', page: RecordsPage, ability: 'records:read' },
  { path: '/collections/:name/summary', page: SummaryPage, ability: 'records:read' },
  { path: '/collections/:name/schemas', page: SchemasPage, ability: 'schemas:read' },
  { path: '/collections/:name/indexes', page: IndexesPage, ability: 'indexes:manage' },
  { path: '/collections/:name/files', page: FilesPage, ability: 'files:read' },
  { path: '/trash', page: TrashPage, ability: 'collections:read' },
  { path: '/keys', page: KeysPage, ability: 'keys:create-own' },
  { path: '/service-accounts', page: ServiceAccountsPage, ability: 'service-accounts:manage' },
  { path: '/webhooks', page: WebhooksPage, ability: 'webhooks:manage' },
  { path: '/webhooks/:id', page: WebhookPage, ability: 'webhooks:manage' },
  { path: '/members', page: MembersPage, ability: 'members:read' },
  { path: '/audit-log', page: AuditLogPage, ability: 'audit:read' },
  { path: '/backups', page: BackupsPage, roles: ['owner'] },
];

/** The navigation of the signed-in layout; an entry shows only to roles with its ability. One line per entry. */
export const nav: NavEntry[] = [
  { to: '/', label: 'Collections', ability: 'collections:read' },
  { to: '/trash', label: 'Trash', ability: 'collections:read' },
  { to: '/keys', label: 'API keys', ability: 'keys:create-own' },
  { to: '/service-accounts', label: 'Service accounts', ability: 'service-accounts:manage' },
  { to: '/webhooks', label: 'Webhooks', ability: 'webhooks:manage' },
  { to: '/members', label: 'People', ability: 'members:read' },
  { to: '/audit-log', label: 'Audit log', ability: 'audit:read' },
  { to: '/backups', label: 'Backups', roles: ['owner'] },
];

export function App(): React.JSX.Element {
  const location = useLocation();
  const path = location.split('?')[0] || '/';
  for (const route of routes) {
    const params = matchPath(route.path, path);
    if (!params) continue;
    const Page = route.page;
    const page = (
      <RouteParams.Provider value={params}>
        <Page />
      </RouteParams.Provider>
    );
    if (route.public) return <main className="public-page">{page}</main>;
    return (
      <RouteGate needsWorkspace={route.workspace !== false}>
        <Layout nav={nav} ability={route.ability} roles={route.roles}>
          {page}
        </Layout>
      </RouteGate>
    );
  }
  return (
    <RouteGate needsWorkspace={false}>
      <Layout nav={nav}>
        <NotFound />
      </Layout>
    </RouteGate>
  );
}

function NotFound(): React.JSX.Element {
  return (
    <section>
      <h1>Page not found</h1>
      <p>There is no dashboard page at this address. Use the navigation to find your way.</p>
    </section>
  );
}
