import { createContext, useContext, useEffect, useSyncExternalStore, type MouseEvent, type ReactNode } from 'react';

/**
 * A tiny router on history.pushState: the app's URLs are real paths (the service answers every
 * dashboard path with index.html), so links can be shared, bookmarked and opened in a new tab.
 */

const listeners = new Set<() => void>();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  window.addEventListener('popstate', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('popstate', listener);
  };
}

function currentLocation(): string {
  return window.location.pathname + window.location.search;
}

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (path === currentLocation()) return;
  if (options.replace) window.history.replaceState(null, '', path);
  else window.history.pushState(null, '', path);
  window.scrollTo(0, 0);
  for (const listener of listeners) listener();
}

export function Link(props: { to: string; children: ReactNode; className?: string }): React.JSX.Element {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    // New tab, new window, download: leave those to the browser.
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(props.to);
  };
  const here = typeof window !== 'undefined' && window.location.pathname === props.to.split('?')[0];
  return (
    <a href={props.to} className={props.className} onClick={onClick} aria-current={here ? 'page' : undefined}>
      {props.children}
    </a>
  );
}

/** The current location; re-renders on navigate() and on back/forward. */
export function useLocation(): string {
  return useSyncExternalStore(subscribe, currentLocation);
}

/** Matches a route pattern like `/collections/:name/records` against a path; null when it does not fit. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    if (segment.startsWith(':')) {
      try {
        params[segment.slice(1)] = decodeURIComponent(have[i]!);
      } catch {
        return null;
      }
    } else if (segment !== have[i]) return null;
  }
  return params;
}

/** The path parameters of the route the App matched (App.tsx provides them). */
export const RouteParams = createContext<Record<string, string>>({});

export function useRoute(): { path: string; params: Record<string, string>; query: URLSearchParams } {
  const location = useLocation();
  const [path = '/', search = ''] = location.split('?', 2);
  return { path, params: useContext(RouteParams), query: new URLSearchParams(search) };
}

/** Sets the document title for a page, so tabs and screen readers say where one is. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Plainbase`;
  }, [title]);
}
