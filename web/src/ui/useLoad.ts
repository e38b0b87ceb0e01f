import { useCallback, useEffect, useRef, useState } from 'react';

export interface Loaded<T> {
  /** The last answer; undefined before the first one and after a failed load. */
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again, after a change the page made. */
  reload: () => Promise<void>;
}

/**
 * Loads something from the API when the page opens and again whenever `key` changes (say the
 * workspace and the collection it is about). An answer that arrives after a newer request started
 * is dropped, so a quick change never shows an older result last; a failed load shows its error
 * instead of what was there, so nothing stale stands beside the error.
 */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const latest = useRef(0);
  // `load` is a new function each render; `key` says when it means something new.
  const loadRef = useRef(load);
  loadRef.current = load;

  const reload = useCallback(async () => {
    const ticket = ++latest.current;
    setState((previous) => ({ ...previous, loading: true }));
    try {
      const data = await loadRef.current();
      if (ticket === latest.current) setState({ data, error: null, loading: false });
    } catch (error) {
      if (ticket === latest.current) setState({ data: undefined, error, loading: false });
    }
  }, []);

  useEffect(() => {
    void reload();
  }, [key, reload]);

  return { ...state, reload };
}
