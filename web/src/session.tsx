import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { ROLE_ABILITIES, type Ability } from '../../src/abilities.js';
import { api, ApiError, onSessionEnded, setWorkspaceHeader } from './api.js';
import type { Person, SessionBody, Workspace } from './api-types.js';
import { queryClient } from './query/query-client.js';

/**
 * Who is signed in and which workspace they are looking at. The role table is the server's own
 * (src/abilities.ts), so the dashboard offers exactly what the API would allow.
 */

export interface SessionState {
  person: Person;
  workspaces: Workspace[];
  workspace: Workspace; // the selected one
  can(ability: string): boolean; // from src/abilities.ts ROLE_ABILITIES[workspace.role]
  switchWorkspace(id: string): void;
  refresh(): Promise<void>;
}

/** What the whole app knows: nobody yet (loading), signed out, or a person with maybe no workspace. */
export type AuthState =
  | { status: 'loading' }
  | { status: 'unreachable'; error: unknown }
  | { status: 'signed-out' }
  | {
      status: 'signed-in';
      person: Person;
      workspaces: Workspace[];
      workspace: Workspace | null;
      switchWorkspace(id: string): void;
      refresh(): Promise<void>;
    };

interface AuthControls {
  state: AuthState;
  /** After sign-in, setup or accepting an invite: take the session the API answered with. */
  signedIn(body: SessionBody, preferredWorkspaceId?: string): void;
  signOut(): Promise<void>;
  refresh(): Promise<void>;
}

const SELECTED_KEY = 'plainbase.workspace';
const AuthContext = createContext<AuthControls | null>(null);
const SessionContext = createContext<SessionState | null>(null);

function pickWorkspace(workspaces: Workspace[], preferred: string | null): Workspace | null {
  return workspaces.find((workspace) => workspace.id === preferred) ?? workspaces[0] ?? null;
}

function remembered(): string | null {
  try {
    return window.localStorage.getItem(SELECTED_KEY);
  } catch {
    return null;
  }
}

function remember(id: string | null): void {
  try {
    if (id) window.localStorage.setItem(SELECTED_KEY, id);
    else window.localStorage.removeItem(SELECTED_KEY);
  } catch {
    // Private browsing may refuse storage; the choice then lasts until reload.
  }
}

export function AuthProvider(props: { children: ReactNode }): React.JSX.Element {
  const [body, setBody] = useState<SessionBody | null | undefined>(undefined);
  const [unreachable, setUnreachable] = useState<unknown>(null);
  const [selectedId, setSelectedId] = useState<string | null>(remembered);

  const refresh = useCallback(async () => {
    try {
      setBody(await api<SessionBody>('GET', '/v1/auth/session'));
      setUnreachable(null);
    } catch (error) {
      // 401: nobody is signed in. Anything else (the service is down): say so, keep what we had.
      if (error instanceof ApiError && error.status === 401) setBody(null);
      else setUnreachable(error);
    }
  }, []);

  useEffect(() => {
    void refresh();
    onSessionEnded(() => setBody(null));
    return () => onSessionEnded(null);
  }, [refresh]);

  // Signed out: nothing the last person saw stays in the cache for whoever signs in next. Only
  // when someone was signed in: the first check finding nobody has nothing of anyone's to drop,
  // and clearing then would also drop what a page open to anyone (an invite link) is loading,
  // leaving it waiting for an answer that goes to a query no longer in the cache.
  const before = useRef(body);
  useEffect(() => {
    if (body === null && before.current) queryClient.clear();
    before.current = body;
  }, [body]);

  const workspace = body ? pickWorkspace(body.workspaces, selectedId) : null;
  // Set during render, not in an effect: a page's first request must already name the workspace.
  setWorkspaceHeader(workspace?.id ?? null);

  const switchWorkspace = useCallback((id: string) => {
    remember(id);
    setSelectedId(id);
  }, []);

  const controls = useMemo<AuthControls>(() => {
    const state: AuthState =
      body === undefined && unreachable ? { status: 'unreachable', error: unreachable } :
      body === undefined ? { status: 'loading' } :
      body === null ? { status: 'signed-out' } :
      { status: 'signed-in', person: body.person, workspaces: body.workspaces, workspace, switchWorkspace, refresh };
    return {
      state,
      signedIn(next, preferredWorkspaceId) {
        if (preferredWorkspaceId) {
          remember(preferredWorkspaceId);
          setSelectedId(preferredWorkspaceId);
        }
        setBody(next);
      },
      async signOut() {
        try {
          await api('POST', '/v1/auth/sign-out');
        } catch (error) {
          // 401: the session had already ended on the server, which is what was asked. Anything
          // else (refused, unreachable) leaves the session alive: the person must hear of it, not
          // be shown a sign-in page while still signed in.
          if (!(error instanceof ApiError && error.status === 401)) throw error;
        }
        setBody(null);
      },
      refresh,
    };
  }, [body, unreachable, workspace, switchWorkspace, refresh]);

  return <AuthContext.Provider value={controls}>{props.children}</AuthContext.Provider>;
}

/** The whole app's view of the session: for the sign-in, setup and invite pages and the layout. */
export function useAuth(): AuthControls {
  const controls = useContext(AuthContext);
  if (!controls) throw new Error('useAuth outside <AuthProvider>');
  return controls;
}

/** Provides useSession() to the pages of the signed-in layout, once a workspace is selected. */
export function SessionProvider(props: { children: ReactNode }): React.JSX.Element | null {
  const { state } = useAuth();
  const value = useMemo<SessionState | null>(() => {
    if (state.status !== 'signed-in' || !state.workspace) return null;
    const abilities: ReadonlySet<Ability> = ROLE_ABILITIES[state.workspace.role];
    return {
      person: state.person,
      workspaces: state.workspaces,
      workspace: state.workspace,
      can: (ability: string) => abilities.has(ability as Ability),
      switchWorkspace: state.switchWorkspace,
      refresh: state.refresh,
    };
  }, [state]);
  if (!value) return null;
  return <SessionContext.Provider value={value}>{props.children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside the signed-in layout');
  return session;
}
