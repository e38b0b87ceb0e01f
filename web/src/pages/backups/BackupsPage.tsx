import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api.js';
import { useTitle } from '../../router.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { formatBytes } from '../../ui/format-bytes.js';
import { newestFirst } from '../../ui/newest-first.js';
import { Time } from '../../ui/Time.js';
import { downloadFromApi } from '../data/download.js';
import type { Backup, BackupStarted } from '../../api-types.js';

/** How often the list is read again while a backup started here is not in it yet. */
const WAIT_POLL_MS = 1000;
/** How long the page keeps looking for it before it says so and leaves the reading to Refresh. */
const WAIT_LIMIT_MS = 10 * 60_000;

const contentPath = (name: string) => `/v1/backups/${encodeURIComponent(name)}/content`;

/**
 * `/backups` (owners): the backups the service keeps, newest first, each with its size and time
 * and a download; "Back up now" starts one, and the list is read again until it shows.
 */
export function BackupsPage(): React.JSX.Element {
  useTitle('Backups');
  const [waitingFor, setWaitingFor] = useState<{ name: string; since: number } | null>(null);
  const [downloading, setDownloading] = useState<{ name: string; received: number; total: number | null } | null>(null);
  const [downloadError, setDownloadError] = useState<unknown>(null);

  const waiting = waitingFor !== null && Date.now() - waitingFor.since < WAIT_LIMIT_MS;
  const backups = useApiQuery(['/v1/backups'], async (signal) => newestFirst((await api<{ data: Backup[] }>('GET', '/v1/backups', undefined, signal)).data, (backup) => backup.createdAt), waiting ? { refreshEveryMs: WAIT_POLL_MS } : {});
  const listed = waitingFor !== null && (backups.data?.some((backup) => backup.name === waitingFor.name) ?? false);

  const start = useMutation({
    mutationFn: () => api<BackupStarted>('POST', '/v1/backups'),
    onMutate: () => setWaitingFor(null),
    onSuccess: (started) => setWaitingFor({ name: started.name, since: Date.now() }),
  });
  const running = start.isPending || (waiting && !listed);

  async function download(backup: Backup) {
    setDownloadError(null);
    setDownloading({ name: backup.name, received: 0, total: backup.size });
    try {
      await downloadFromApi(contentPath(backup.name), backup.name, (received, total) => setDownloading({ name: backup.name, received, total: total ?? backup.size }));
    } catch (caught) {
      setDownloadError(caught);
    } finally {
      setDownloading(null);
    }
  }

  return (
    <section>
      <div className="page-head">
        <h1>Backups</h1>
        <div className="actions">
          <button type="button" onClick={() => void backups.reload()} disabled={backups.loading}>
            Refresh
          </button>
          <button type="button" className="primary" onClick={() => start.mutate()} disabled={running} aria-busy={running}>
            {running ? 'Backing up…' : 'Back up now'}
          </button>
        </div>
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
      {waitingFor && !listed && !waiting ? (
        <p role="status" className="notice">
          Backup {waitingFor.name} is not listed yet: it may still be running. Press Refresh later.
        </p>
      ) : null}
      {downloading ? (
        <p role="status" className="progress">
          <progress aria-label="Download" max={downloading.total ?? undefined} value={downloading.total ? downloading.received : undefined} /> {formatBytes(downloading.received)}
          {downloading.total ? ` of ${formatBytes(downloading.total)}` : ''} received
        </p>
      ) : null}
      {/* One error at a time: the last thing tried. */}
      <ErrorText error={start.error ?? downloadError ?? backups.error} />

      {backups.loading && !backups.data ? <p role="status">Loading backups…</p> : null}
      {backups.data && backups.data.length === 0 ? <p className="empty">No backups yet. Back up now, or set a schedule (see the documentation on backups).</p> : null}
      {backups.data && backups.data.length > 0 ? (
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">Backups, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Size</th>
                <th scope="col">Created</th>
                <th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {backups.data.map((backup) => (
                <tr key={backup.name}>
                  <th scope="row">
                    <code>{backup.name}</code>
                  </th>
                  <td>{formatBytes(backup.size)}</td>
                  <td>
                    <Time value={backup.createdAt} />
                  </td>
                  <td className="row-actions">
                    <button type="button" onClick={() => void download(backup)} disabled={downloading !== null} aria-label={`Download ${backup.name}`}>
                      Download
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
