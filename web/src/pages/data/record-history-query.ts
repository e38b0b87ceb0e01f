import { useQueryClient } from '@tanstack/react-query';
import { api, type Page } from '../../api.js';
import type { RecordVersion } from '../../api-types.js';
import { useApiQuery, useWorkspaceKey, type Loaded } from '../../query/useApiQuery.js';
import { collectionPath } from './collection-paths.js';

/** Enough history for a glance; the API has the rest (docs/history.md). */
export const VERSIONS_SHOWN = 20;

const versionsPath = (collection: string, recordId: string) => collectionPath(collection, 'records', recordId, 'versions');

/** A record's newest versions (its history), newest first. */
export function useRecordHistory(collection: string, recordId: string): Loaded<Page<RecordVersion>> {
  const path = versionsPath(collection, recordId);
  return useApiQuery([path], (signal) => api<Page<RecordVersion>>('GET', `${path}?limit=${VERSIONS_SHOWN}`, undefined, signal));
}

/**
 * Marks a record's history stale after a change heard of from elsewhere (the event stream): a
 * history on screen loads again, one not shown does when it opens. Without a record id, every
 * record's history of the collection (live updates resumed after changes went unheard). This tab's
 * own writes need not call it: every write marks the whole cache stale (query-client.ts).
 */
export function useRecordHistoryInvalidation(collection: string): (recordId?: string) => void {
  const client = useQueryClient();
  const workspaceKey = useWorkspaceKey([]);
  const records = `${collectionPath(collection, 'records')}/`;
  return (recordId) => {
    if (recordId !== undefined) {
      void client.invalidateQueries({ queryKey: [...workspaceKey, versionsPath(collection, recordId)] });
      return;
    }
    void client.invalidateQueries({
      queryKey: workspaceKey,
      predicate: ({ queryKey }) => {
        const path = queryKey[workspaceKey.length];
        return typeof path === 'string' && path.startsWith(records) && path.endsWith('/versions');
      },
    });
  };
}
