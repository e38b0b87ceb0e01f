import { QueryClient } from '@tanstack/react-query';
import { ApiError } from '../api.js';

/** Tries after a failure the service may get over (unreachable, 5xx); an answer like 404 or 403 stands. */
const RETRIES = 2;

/**
 * The dashboard's one cache of API answers. A list or a thing read once shows at once when a page
 * is opened again and is fetched afresh behind it (staleTime 0); every successful write marks the
 * whole cache stale (invalidateAfterWrite), so what a page shows next never predates a change made
 * here. No refetch on window focus: the records page hears of changes through the event stream,
 * and a form opened from a loaded value must not be reset under the person typing in it (figures
 * that change on their own, like the submissions chart, ask for it: useApiQuery's refreshEveryMs).
 */
export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 0,
      refetchOnWindowFocus: false,
      retry: (failures, error) => failures < RETRIES && (!(error instanceof ApiError) || error.status === 0 || error.status >= 500),
    },
  },
});

/** After a write that succeeded: the page on screen loads again what it shows, other pages when they open. */
export function invalidateAfterWrite(): void {
  void queryClient.invalidateQueries();
}
