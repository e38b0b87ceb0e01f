import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiError, withCursor, type Page } from '../../api.js';
import { useTitle } from '../../router.js';
import { usePagedQuery } from '../../query/usePagedQuery.js';
import { ACTIONS_COLUMN, DataTable } from '../../ui/DataTable.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { formatBytes } from '../../ui/format-bytes.js';
import { Time } from '../../ui/Time.js';
import type { Backup, BackupStarted } from '../../api-types.js';

/** How often the list is read again while a backup started here is not in it yet. */
const WAIT_POLL_MS = 1000;
/** How long the page keeps looking for it before it says so and leaves the reading to Refresh. */
const WAIT_LIMIT_MS = 10 * 60_000;

/**
 * Where a backup downloads from. A plain link: the route needs the session and no workspace, so
 * the browser saves the archive as it arrives, however large, without holding it in the page.
 */
const contentPath = (name: string) => `/v1/backups/${encodeURIComponent(name)}/content`;

/**
 * `/backups` (owners; the API lets only the first owner of the service in, and the page says so
 * to anyone else): the backups the service keeps, newest first, with their size and time and a
 * download link; "Back up now" starts one, written in the background, and the list is read again
 * every second until it shows.
 */
export function BackupsPage(): React.JSX.Element {
  useTitle('Backups');
  const [waitingFor, setWaitingFor] = useState<{ name: string; since: number } | null>(null);
  const [poll, setPoll] = useState(false);
  const backups = usePagedQuery<Backup>(
    ['/v1/backups', 'paged'],
    (cursor, signal) => api<Page<Backup>>('GET', withCursor('/v1/backups?limit=50', cursor), undefined, signal),
    poll ? { refreshEveryMs: WAIT_POLL_MS } : {},
  );
  const listed = waitingFor !== null && backups.items.some((backup) => backup.name === waitingFor.name);
  // The list is read again until the new backup is in it, or for WAIT_LIMIT_MS (each reading renders
  // the page again, so the time is looked at often enough). Set while rendering: React's way to
  // follow what the last render found.
  const stillLooking = waitingFor !== null && !listed && Date.now() - waitingFor.since < WAIT_LIMIT_MS;
  if (poll !== stillLooking) setPoll(stillLooking);

  const start = useMutation({
    mutationFn: () => api<BackupStarted>('POST', '/v1/backups', {}),
    onMutate: () => setWaitingFor(null),
    onSuccess: (started) => setWaitingFor({ name: started.name, since: Date.now() }),
  });
  const running = start.isPending || stillLooking;
  // The service refuses everyone but its first owner: then there is nothing here to offer.
  const refused = backups.error instanceof ApiError && backups.error.status === 403;

  return (
    <section>
      <div className="page-head">
        <h1>Backups</h1>
        {!refused ? (
          <div className="actions">
            <button type="button" onClick={() => void backups.reload()} disabled={backups.loading}>
              Refresh
            </button>
            <button type="button" className="primary" onClick={() => start.mutate()} disabled={running} aria-busy={running}>
              {running ? 'Backing up…' : 'Back up now'}
            </button>
          </div>
        ) : null}
      </div>
      <p className="lead">
        A backup holds everything the service keeps, for every workspace: people, keys, collections, records with their history, files and webhooks. Keep
        downloaded backups somewhere safe: they hold your data and the hashes of passwords and keys.
      </p>

      {running ? (
        <p role="status" className="progress">
          <progress aria-label="Backup in progress" /> {waitingFor ? `Backing up to ${waitingFor.name}…` : 'Starting a backup…'}
        </p>
      ) : null}
      {waitingFor && listed ? (
        <p role="status" className="notice">
          Backup {waitingFor.name} is ready.
        </p>
      ) : null}
      {waitingFor && !listed && !stillLooking ? (
        <p role="status" className="notice">
          Backup {waitingFor.name} is not listed yet: it may still be running, or it failed (the service’s log says). Press Refresh later.
        </p>
      ) : null}
      {/* One error at a time: the last thing tried. */}
      <ErrorText error={start.error ?? backups.error} />

      {backups.loading && backups.items.length === 0 ? <p role="status">Loading backups…</p> : null}
      {!backups.loading && !backups.error && backups.items.length === 0 ? (
        <p className="empty">No backups yet. Back up now, or have the service take them on a schedule (PLAINBASE_BACKUP_SCHEDULE).</p>
      ) : null}
      {backups.items.length > 0 ? (
        <DataTable<Backup>
          caption="Backups, newest first"
          rows={backups.items}
          rowKey={(backup) => backup.name}
          columns={[
            { id: 'name', label: 'Name', fixed: true, cell: (backup) => <code>{backup.name}</code>, title: (backup) => backup.name },
            { id: 'size', label: 'Size', cell: (backup) => formatBytes(backup.size) },
            { id: 'createdAt', label: 'Created', cell: (backup) => <Time value={backup.createdAt} /> },
            {
              ...ACTIONS_COLUMN,
                            cell: (backup) => (
                <a href={contentPath(backup.name)} download={backup.name} aria-label={`Download ${backup.name}`}>
                  Download
                </a>
              ),
            },
          ]}
          pager={{ hasMore: backups.hasMore, loading: backups.loading, onMore: () => void backups.more() }}
        />
      ) : null}
    </section>
  );
}
