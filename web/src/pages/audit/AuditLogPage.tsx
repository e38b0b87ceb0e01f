import { useEffect, useState } from 'react';
import { api, loadAll, type Page } from '../../api.js';
import { navigate, useRoute, useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { DataTable } from '../../ui/DataTable.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Field } from '../../ui/Field.js';
import { useForm } from '../../ui/Form.js';
import { Time } from '../../ui/Time.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { usePagedQuery } from '../../query/usePagedQuery.js';
import type { AuditEntry, Member } from '../../api-types.js';
import { newestFirst } from '../../ui/newest-first.js';
import { useAuditNames } from './audit-names.js';

/** Actions the service records, for the filter's suggestions; a prefix like `member.*` works too. */
const KNOWN_ACTIONS = [
  'auth.*', 'auth.signed_in', 'auth.sign_in_failed',
  'collection.*', 'collection.created', 'collection.updated', 'collection.trashed', 'collection.restored', 'collection.purged', 'collection.records_imported',
  'record.purged',
  'schema.*', 'schema.created', 'schema.activated', 'schema.deactivated',
  'key.*', 'key.created', 'key.rotated', 'key.revoked',
  'service_account.*', 'service_account.created', 'service_account.updated', 'service_account.deleted',
  'webhook.*', 'webhook.auto_disabled', 'webhook.delivery_replayed', 'webhook.failed_retried',
  'member.*', 'member.role_changed', 'member.removed',
  'invite.*', 'invite.created', 'invite.accepted', 'invite.revoked',
  'workspace.*', 'workspace.created', 'workspace.ownership_transferred',
];

/** Entries per page: 50, or `?limit=` in the address (1 to 1000, as the API allows). */
function pageSize(query: URLSearchParams): number {
  const asked = Number(query.get('limit'));
  return Number.isInteger(asked) && asked >= 1 && asked <= 1000 ? asked : 50;
}

/** `datetime-local` input value (the person's local time) to the API's UTC timestamp. */
function toInstant(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/**
 * The audit log, newest first, filtered by actor, action and time; the filters live in the URL so
 * a filtered view can be shared. "Load more" follows the API's cursor.
 */
export function AuditLogPage(): React.JSX.Element {
  useTitle('Audit log');
  const session = useSession();
  const { query } = useRoute();
  const applied = { actor: query.get('actor') ?? '', action: query.get('action') ?? '', since: query.get('since') ?? '' };
  const [draft, setDraft] = useState(applied);
  const limit = pageSize(query);
  const filterKey = `${applied.actor}|${applied.action}|${applied.since}|${limit}`;
  // The filter's suggestions of actors; names beside ids come from useAuditNames.
  const members = useApiQuery(['/v1/members'], async (signal) => newestFirst(await loadAll<Member>('/v1/members', signal), (member) => member.joinedAt)).data ?? [];
  const names = useAuditNames();

  // The filters in the address decide what is shown: from the first page again when they change.
  const entries = usePagedQuery<AuditEntry>(['/v1/audit-log', applied, limit], (cursor, signal) => {
    const params = new URLSearchParams({ limit: String(limit) });
    if (applied.actor) params.set('actor', applied.actor);
    if (applied.action) params.set('action', applied.action);
    const since = toInstant(applied.since);
    if (since) params.set('since', since);
    if (cursor) params.set('cursor', cursor);
    return api<Page<AuditEntry>>('GET', `/v1/audit-log?${params}`, undefined, signal);
  });

  useEffect(() => setDraft(applied), [filterKey]);

  // A toolbar of filters: the shared form state, its own layout. Applying only changes the address.
  const filters = useForm(async () => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(draft)) if (value.trim()) params.set(name, value.trim());
    if (query.has('limit')) params.set('limit', String(limit));
    const search = params.toString();
    navigate(search ? `/audit-log?${search}` : '/audit-log');
  });

  const actorName = (entry: AuditEntry) => entry.actor.name ?? entry.actor.id ?? entry.actor.type;

  return (
    <section>
      <h1>Audit log</h1>
      <p className="muted">Who did what in {session.workspace.name}, newest first.</p>
      <form className="panel inline-form" onSubmit={(event) => void filters.send(event)} aria-label="Filter the audit log">
        <Field label="Actor" hint="A member, or paste a key or service account id.">
          <input list="audit-actors" value={draft.actor} onChange={(event) => setDraft({ ...draft, actor: event.target.value })} placeholder="per_…, key_…, sa_…" />
        </Field>
        <datalist id="audit-actors">
          {members.map((member) => (
            <option key={member.personId} value={member.personId}>
              {member.name} ({member.email})
            </option>
          ))}
        </datalist>
        <Field label="Action" hint="Like member.removed, or member.* for all of them.">
          <input list="audit-actions" value={draft.action} onChange={(event) => setDraft({ ...draft, action: event.target.value })} />
        </Field>
        <datalist id="audit-actions">
          {KNOWN_ACTIONS.map((action) => (
            <option key={action} value={action} />
          ))}
        </datalist>
        <Field label="Since">
          <input type="datetime-local" value={draft.since} onChange={(event) => setDraft({ ...draft, since: event.target.value })} />
        </Field>
        <div className="actions">
          <button type="submit" className="primary">
            Apply filters
          </button>
          <button type="button" onClick={() => navigate('/audit-log')} disabled={!applied.actor && !applied.action && !applied.since}>
            Clear
          </button>
        </div>
      </form>
      <ErrorText error={entries.error} />
      {entries.loading && entries.items.length === 0 ? <p role="status">Loading the audit log…</p> : null}
      {!entries.loading && !entries.error && entries.items.length === 0 ? <p className="muted">No entries match.</p> : null}
      {entries.items.length > 0 ? (
        <DataTable<AuditEntry>
          caption={`Audit log of ${session.workspace.name}, newest first`}
          rows={entries.items}
          rowKey={(entry) => entry.id}
          columns={[
            { id: 'at', label: 'When', fixed: true, cell: (entry) => <Time value={entry.at} compact /> },
            {
              id: 'actor',
              label: 'Actor',
              cell: (entry) => (
                <>
                  {actorName(entry)} <span className="muted">({entry.actor.type.replace('_', ' ')})</span>
                  {entry.actor.id && entry.actor.name ? <> <code className="audit-id">{entry.actor.id}</code></> : null}
                </>
              ),
              title: (entry) => [actorName(entry), `(${entry.actor.type.replace('_', ' ')})`, entry.actor.name ? entry.actor.id : undefined].filter(Boolean).join(' '),
            },
            { id: 'action', label: 'Action', cell: (entry) => <code>{entry.action}</code>, title: (entry) => entry.action },
            {
              id: 'target',
              label: 'Target',
              cell: (entry) => <Target target={entry.target} names={names} />,
              title: (entry) => (entry.target ? [entry.target.type.replace('_', ' '), names.get(entry.target.id), entry.target.id].filter(Boolean).join(' ') : undefined),
            },
            { id: 'details', label: 'Details', cell: (entry) => <Details entry={entry} names={names} />, title: detailsText },
          ]}
          pager={{ hasMore: entries.hasMore, loading: entries.loading, onMore: () => void entries.more() }}
        />
      ) : null}
    </section>
  );
}

/** The whole of an entry's details in plain words, one name and value a line: what hovering a cut cell shows. */
function detailsText(entry: AuditEntry): string | undefined {
  const lines = Object.entries(entry.details).map(([name, value]) => `${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  if (entry.ip) lines.push(`from ${entry.ip}`);
  if (entry.requestId) lines.push(entry.requestId);
  return lines.length ? lines.join('\n') : undefined;
}

/** A target by its name where the page knows it, with its type and id. */
function Target(props: { target: AuditEntry['target']; names: ReadonlyMap<string, string> }): React.JSX.Element {
  const { target } = props;
  if (!target) return <>—</>;
  return (
    <span>
      {target.type.replace('_', ' ')} <Named id={target.id} names={props.names} />
    </span>
  );
}

/** An id with the name it stands for beside it, when known: "leads col_…". */
function Named(props: { id: string; names: ReadonlyMap<string, string> }): React.JSX.Element {
  const name = props.names.get(props.id);
  return (
    <>
      {name ? <strong>{name}</strong> : null} <code className="audit-id">{props.id}</code>
    </>
  );
}

/** What the entry records, one name and value a line, then where the request came from. */
function Details(props: { entry: AuditEntry; names: ReadonlyMap<string, string> }): React.JSX.Element {
  const { details, ip, requestId } = props.entry;
  const pairs = Object.entries(details);
  return (
    <div className="audit-details">
      {pairs.length ? <DetailList pairs={pairs} names={props.names} /> : '—'}
      {ip || requestId ? (
        <small className="muted">
          {ip ? `from ${ip}` : ''} {requestId ? `· ${requestId}` : ''}
        </small>
      ) : null}
    </div>
  );
}

function DetailList(props: { pairs: [string, unknown][]; names: ReadonlyMap<string, string> }): React.JSX.Element {
  return (
    <dl className="detail-list">
      {props.pairs.map(([name, value]) => (
        <div key={name}>
          <dt>{name}:</dt> <dd><DetailValue name={name} value={value} names={props.names} /></dd>
        </div>
      ))}
    </dl>
  );
}

/** Ids the service makes (col_…, key_…, per_…): named beside them when the page knows them. */
const ID = /^[a-z]{2,3}_[0-9a-z]{26}$/;

/**
 * A value for people: text as it is, an id with its name, a list joined, an object as its own
 * names and values. A key's or webhook's `collections` of null means every collection.
 */
function DetailValue(props: { name: string; value: unknown; names: ReadonlyMap<string, string> }): React.JSX.Element {
  const { value, names } = props;
  if ((value === null || value === undefined) && props.name === 'collections') return <>all</>;
  if (value === null || value === undefined) return <span className="muted">none</span>;
  if (typeof value === 'string' && ID.test(value)) return <Named id={value} names={names} />;
  if (Array.isArray(value)) {
    if (!value.length) return <span className="muted">none</span>;
    if (value.every((item) => typeof item === 'string' && ID.test(item))) {
      return <>{value.map((item: string, index) => <span key={item}>{index ? ', ' : ''}<Named id={item} names={names} /></span>)}</>;
    }
    if (value.every((item) => item === null || typeof item !== 'object')) return <>{value.map(String).join(', ')}</>;
    return <code>{JSON.stringify(value)}</code>;
  }
  if (typeof value === 'object') return <DetailList pairs={Object.entries(value)} names={names} />;
  return <>{String(value)}</>;
}
