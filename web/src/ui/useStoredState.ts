import { useEffect, useState } from 'react';

/**
 * A choice remembered in this browser (localStorage) under `key`, as JSON; `fallback` when nothing
 * is stored, the stored value is not what `valid` accepts, or storage is refused (private
 * browsing: the choice then lasts until the page is left). A new `key` reads its own value.
 */
export function useStoredState<T>(key: string, fallback: T, valid: (value: unknown) => value is T): [T, (next: T) => void] {
  const [state, setState] = useState<{ key: string; value: T }>(() => ({ key, value: read(key, fallback, valid) }));
  const value = state.key === key ? state.value : read(key, fallback, valid);
  useEffect(() => {
    if (state.key !== key) setState({ key, value });
  }, [key]); // Only when the key changes: the value read for it is then kept.
  const set = (next: T) => {
    setState({ key, value: next });
    try {
      window.localStorage.setItem(key, JSON.stringify(next));
    } catch {
      // Storage refused: the choice holds until the page is left.
    }
  };
  return [value, set];
}

function read<T>(key: string, fallback: T, valid: (value: unknown) => value is T): T {
  try {
    const stored = window.localStorage.getItem(key);
    if (stored === null) return fallback;
    const parsed: unknown = JSON.parse(stored);
    return valid(parsed) ? parsed : fallback;
  } catch {
    return fallback;
  }
}
