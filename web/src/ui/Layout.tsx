import { Fragment, useEffect, useRef, useState, type ReactNode } from 'react';
import { ROLE_ABILITIES, type Ability, type Role } from '../../../src/abilities.js';
import { WorkspaceSwitcher } from '../pages/workspaces/WorkspaceSwitcher.js';
import { Link, navigate, useLocation } from '../router.js';
import { useAuth } from '../session.js';
import { errorText } from '../api.js';
import { ThemeSwitcher } from './ThemeSwitcher.js';

/** A link of the navigation, shown to the roles with its ability, or to the roles it lists. */
export type NavEntry = { to: string; label: string } & ({ ability: string; roles?: never } | { roles: readonly Role[]; ability?: never });

/**
 * The signed-in frame: the workspace switcher, the navigation (only what the role may use), the
 * person and sign-out. On a narrow screen the navigation folds behind a Menu button.
 */
export function Layout(props: { nav: NavEntry[]; ability?: string | undefined; roles?: readonly Role[] | undefined; children: ReactNode }): React.JSX.Element | null {
  const { state, signOut } = useAuth();
  const location = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const [signOutError, setSignOutError] = useState<unknown>(null);
  const [signingOut, setSigningOut] = useState(false);
  const content = useRef<HTMLElement>(null);
  const path = location.split('?')[0];
  const firstPath = useRef(path);

  // After moving to another page, screen readers and keyboards start at its content, not at the
  // link that was followed (the first page load keeps the browser's own start).
  useEffect(() => {
    if (path !== firstPath.current) content.current?.focus({ preventScroll: true });
  }, [path]);

  if (state.status !== 'signed-in') return null;

  const abilities: ReadonlySet<string> | null = state.workspace ? ROLE_ABILITIES[state.workspace.role] : null;
  const allowed = (ability: string) => abilities?.has(ability as Ability) ?? false;
  const hasRole = (roles: readonly Role[]) => (state.workspace ? roles.includes(state.workspace.role) : false);
  const entries = props.nav.filter((entry) => (entry.roles ? hasRole(entry.roles) : allowed(entry.ability)));
  const mayOpen = (!props.ability || allowed(props.ability)) && (!props.roles || hasRole(props.roles));

  const doSignOut = async () => {
    setSignOutError(null);
    setSigningOut(true);
    try {
      await signOut();
      navigate('/sign-in');
    } catch (error) {
      setSignOutError(error);
      setSigningOut(false);
    }
  };

  return (
    <div className="layout">
      <a className="skip-link" href="#content">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand">
          Plainbase
        </Link>
        {state.workspace ? <WorkspaceSwitcher /> : null}
        <button type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <div className="whoami">
          <ThemeSwitcher />
          <Link to="/account">{state.person.name}</Link>
          <button type="button" onClick={() => void doSignOut()} disabled={signingOut} aria-busy={signingOut}>
            Sign out
          </button>
        </div>
      </header>
      {signOutError ? (
        <div role="alert" className="error sign-out-error">
          <p>
            <strong>Sign-out failed: you are still signed in.</strong> {errorText(signOutError)}
          </p>
          <button type="button" onClick={() => setSignOutError(null)}>
            Dismiss
          </button>
        </div>
      ) : null}
      <div className="frame">
        <nav id="main-nav" aria-label="Main" className={menuOpen ? 'nav open' : 'nav'} onClick={() => setMenuOpen(false)}>
          <ul>
            {entries.map((entry) => (
              <li key={entry.to}>
                <Link to={entry.to} className={isActive(entry.to, path) ? 'active' : undefined}>
                  {entry.label}
                </Link>
              </li>
            ))}
            <li className="nav-separator">
              <Link to="/workspaces/new">New workspace</Link>
            </li>
          </ul>
        </nav>
        <main id="content" ref={content} tabIndex={-1} className="content">
          {/* Keyed by workspace: switching starts every page afresh, loading the new workspace's data. */}
          <Fragment key={state.workspace?.id ?? 'none'}>{mayOpen ? props.children : <NotAllowed />}</Fragment>
        </main>
      </div>
    </div>
  );
}

function isActive(to: string, path: string | undefined): boolean {
  if (to === '/') return path === '/' || (path ?? '').startsWith('/collections/');
  return path === to || (path ?? '').startsWith(`${to}/`);
}

function NotAllowed(): React.JSX.Element {
  return (
    <section>
      <h1>Not available to your role</h1>
      <p>Your role in this workspace does not allow this page. An owner or admin can change your role on the People page.</p>
    </section>
  );
}
