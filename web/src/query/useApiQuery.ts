import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useSession } from '../session.js';

export interface Loaded<T> {
  /** The last answer; undefined before the first one and after a failed load. */
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again, after a change the page made. */
  reload: () => Promise<void>;
}

/**
 * Something from the API, through the query cache: shown at once when it was read before, loaded
 * (again) when the page opens and whenever `key` changes. `key` names what is loaded (its API path
 * and parameters); the selected workspace is added to it, so two workspaces never share an answer.
 * `load` gets the query's AbortSignal: leaving the page, or changing the key, cancels the request.
 * A failed load shows its error instead of what was there, so nothing stale stands beside it.
 * `enabled: false` waits (for what the key depends on) without loading. `refreshEveryMs` loads it
 * again that often and whenever the tab comes back into focus: for figures that change on their
 * own (counts), never for what a form was filled from.
 */
export function useApiQuery<T>(key: readonly unknown[], load: (signal: AbortSignal) => Promise<T>, options: { enabled?: boolean; refreshEveryMs?: number } = {}): Loaded<T> {
  const queryKey = useWorkspaceKey(key);
  const client = useQueryClient();
  const refresh = options.refreshEveryMs === undefined ? {} : { refetchInterval: options.refreshEveryMs, refetchOnWindowFocus: true };
  const query = useQuery({ queryKey, queryFn: ({ signal }) => load(signal), enabled: options.enabled ?? true, ...refresh });
  return {
    data: query.isError ? undefined : query.data,
    error: query.error,
    loading: query.isFetching,
    reload: () => client.invalidateQueries({ queryKey, exact: true }),
  };
}

/** `key` within the selected workspace: the cache never mixes the answers of two workspaces. */
export function useWorkspaceKey(key: readonly unknown[]): unknown[] {
  const session = useSession();
  return ['workspace', session.workspace.id, ...key];
}
