import { useCallback, useEffect, useRef, useState } from 'react';
import type { Page } from '../api.js';

export interface Paged<T> {
  items: T[];
  /** How many there are in all, when the first page was asked with count=true. */
  total: number | undefined;
  error: unknown;
  loading: boolean;
  hasMore: boolean;
  /** Appends the next page ("Load more"). */
  more: () => Promise<void>;
  /** Starts again from the first page, after a change. */
  reload: () => Promise<void>;
  /** Changes the items shown, without asking the API (a change heard of as it happened). */
  update: (change: (items: T[]) => T[]) => void;
}

/**
 * A cursor-paged list of the API (`{data, nextCursor}`): the first page when the page opens or
 * `key` changes (a filter, the workspace), the next ones on "Load more". An answer that arrives
 * after a newer request started is dropped; a first page that fails empties the list, so the error
 * never stands beside an older list.
 */
export function usePaged<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>, key: string): Paged<T> {
  const [state, setState] = useState<{ items: T[]; total: number | undefined; cursor: string | null; error: unknown; loading: boolean }>({
    items: [],
    total: undefined,
    cursor: null,
    error: null,
    loading: true,
  });
  const latest = useRef(0);
  const fetchRef = useRef(fetchPage);
  fetchRef.current = fetchPage;
  const cursorRef = useRef<string | null>(null);

  const load = useCallback(async (append: boolean) => {
    const ticket = ++latest.current;
    setState((previous) => ({ ...previous, loading: true, error: null }));
    try {
      const page = await fetchRef.current(append ? (cursorRef.current ?? undefined) : undefined);
      if (ticket !== latest.current) return;
      cursorRef.current = page.nextCursor;
      setState((previous) => ({
        items: append ? [...previous.items, ...page.data] : page.data,
        total: page.total ?? (append ? previous.total : undefined),
        cursor: page.nextCursor,
        error: null,
        loading: false,
      }));
    } catch (error) {
      if (ticket !== latest.current) return;
      setState((previous) => ({ ...previous, items: append ? previous.items : [], error, loading: false }));
    }
  }, []);

  useEffect(() => {
    cursorRef.current = null;
    void load(false);
  }, [key, load]);

  return {
    items: state.items,
    total: state.total,
    error: state.error,
    loading: state.loading,
    hasMore: state.cursor !== null,
    more: () => load(true),
    reload: () => load(false),
    update: (change) => setState((previous) => ({ ...previous, items: change(previous.items) })),
  };
}
