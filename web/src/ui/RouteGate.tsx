import { useEffect, type ReactNode } from 'react';
import { navigate, useLocation } from '../router.js';
import { SessionProvider, useAuth } from '../session.js';
import { ErrorText } from './ErrorText.js';

/**
 * Lets a signed-in page render only for a signed-in person: others go to sign-in (and come back
 * after), and a person without any workspace goes to create one.
 */
export function RouteGate(props: { needsWorkspace: boolean; children: ReactNode }): React.JSX.Element | null {
  const { state, refresh } = useAuth();
  const location = useLocation();
  const redirect =
    state.status === 'signed-out' ? `/sign-in?next=${encodeURIComponent(location)}` :
    state.status === 'signed-in' && !state.workspace && props.needsWorkspace ? '/workspaces/new' :
    null;

  useEffect(() => {
    if (redirect) navigate(redirect, { replace: true });
  }, [redirect]);

  if (state.status === 'loading') {
    return (
      <p className="loading" role="status">
        Loading…
      </p>
    );
  }
  if (state.status === 'unreachable') {
    return (
      <main className="public-page">
        <div className="card">
          <h1>Cannot reach Plainbase</h1>
          <ErrorText error={state.error} />
          <button type="button" onClick={() => void refresh()}>
            Try again
          </button>
        </div>
      </main>
    );
  }
  if (redirect || state.status !== 'signed-in') return null;
  if (!state.workspace) return <>{props.children}</>;
  return <SessionProvider>{props.children}</SessionProvider>;
}
