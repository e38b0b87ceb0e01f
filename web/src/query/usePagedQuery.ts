import { useInfiniteQuery, useQueryClient, type InfiniteData } from '@tanstack/react-query';
import type { Page } from '../api.js';
import { useWorkspaceKey } from './useApiQuery.js';

export interface Paged<T> {
  items: T[];
  /** How many there are in all, when the first page was asked with count=true. */
  total: number | undefined;
  error: unknown;
  loading: boolean;
  hasMore: boolean;
  /** Appends the next page ("Load more"). */
  more: () => Promise<void>;
  /** Loads the pages shown again, after a change. */
  reload: () => Promise<void>;
  /** Changes the items shown, without asking the API (a change heard of as it happened). */
  update: (change: (items: T[]) => T[]) => void;
}

type Cursor = string | undefined;

/**
 * A cursor-paged list of the API (`{data, nextCursor}`) through the query cache: the first page
 * when the page opens or `key` changes (a filter), the next ones on "Load more". `fetchPage` gets
 * the query's AbortSignal, so a page left or a filter changed mid-load cancels the request. A
 * first page that fails empties the list, so the error never stands beside an older list; a
 * "Load more" that fails keeps what was shown. `refreshEveryMs` loads the pages shown again that
 * often, while the page waits for something to appear in the list (a backup being written).
 */
export function usePagedQuery<T>(key: readonly unknown[], fetchPage: (cursor: Cursor, signal: AbortSignal) => Promise<Page<T>>, options: { refreshEveryMs?: number } = {}): Paged<T> {
  const queryKey = useWorkspaceKey(key);
  const client = useQueryClient();
  const query = useInfiniteQuery({
    queryKey,
    queryFn: ({ pageParam, signal }) => fetchPage(pageParam, signal),
    initialPageParam: undefined as Cursor,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    ...(options.refreshEveryMs === undefined ? {} : { refetchInterval: options.refreshEveryMs }),
  });
  const pages = query.data?.pages ?? [];
  const failedFirst = query.isError && !query.isFetchNextPageError;
  return {
    items: failedFirst ? [] : pages.flatMap((page) => page.data),
    total: failedFirst ? undefined : pages[0]?.total,
    error: query.error,
    loading: query.isFetching,
    hasMore: !failedFirst && query.hasNextPage,
    more: async () => {
      await query.fetchNextPage();
    },
    reload: () => client.invalidateQueries({ queryKey, exact: true }),
    update: (change) =>
      client.setQueryData<InfiniteData<Page<T>, Cursor>>(queryKey, (data) => {
        if (!data || data.pages.length === 0) return data;
        // The change is to the list as shown; it is kept as one page that ends where the last one did.
        const first = data.pages[0]!;
        const last = data.pages[data.pages.length - 1]!;
        return { pages: [{ ...first, data: change(data.pages.flatMap((page) => page.data)), nextCursor: last.nextCursor }], pageParams: [data.pageParams[0]] };
      }),
  };
}
