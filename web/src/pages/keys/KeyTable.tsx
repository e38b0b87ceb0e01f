import { ACTIONS_COLUMN, DataTable } from '../../ui/DataTable.js';
import { Time } from '../../ui/Time.js';
import type { ApiKey } from '../../api-types.js';

const STATE_WORDS: Record<ApiKey['state'], string> = { active: 'Active', expired: 'Expired', revoked: 'Revoked' };

/**
 * Keys as a table: what tells them apart (name, preview), what they may do, whose they are, their
 * last use and state, and the actions that still apply (an expired or revoked key can only have its
 * changes undone).
 */
export function KeyTable(props: {
  keys: ApiKey[];
  ownerOf: (key: ApiKey) => string;
  collectionName: (id: string) => string;
  /** False for a key acting with a role above the viewer's: they may revoke it, not rotate it. */
  mayRotate: (key: ApiKey) => boolean;
  onRotate: (key: ApiKey) => void;
  onRevoke: (key: ApiKey) => void;
  /** Given to owners and admins: undoing a key's changes, offered on every key (a revoked one above all: it may have leaked). */
  onUndo?: (key: ApiKey) => void;
  pager: { hasMore: boolean; loading: boolean; onMore: () => void };
}): React.JSX.Element {
  const collectionsOf = (key: ApiKey) => (key.collections ? key.collections.map(props.collectionName).join(', ') : 'All');
  return (
    <DataTable<ApiKey>
      caption="API keys"
      rows={props.keys}
      rowKey={(key) => key.id}
      columns={[
        {
          id: 'name',
          label: 'Name',
          fixed: true,
          cell: (key) => (
            <>
              {key.name}
              {key.mode === 'test' ? (
                <>
                  {' '}
                  <span className="badge">test</span>
                </>
              ) : null}
              <small className="hint owner">{props.ownerOf(key)}</small>
            </>
          ),
          title: (key) => `${key.name}${key.mode === 'test' ? ' (test)' : ''}: ${props.ownerOf(key)}`,
        },
        { id: 'preview', label: 'Key', cell: (key) => <code className="preview">{key.preview}</code>, title: (key) => key.preview },
        {
          id: 'scopes',
          label: 'Scopes',
          cell: (key) => (
            <ul className="plain-list">
              {key.scopes.map((scope) => (
                <li key={scope}>
                  <code>{scope}</code>
                </li>
              ))}
            </ul>
          ),
          title: (key) => key.scopes.join('\n'),
        },
        { id: 'collections', label: 'Collections', cell: collectionsOf, title: collectionsOf },
        {
          id: 'lastUsed',
          label: 'Last used',
          cell: (key) =>
            key.lastUsedAt ? (
              <>
                <Time value={key.lastUsedAt} />
                {key.lastUsedIp ? <div className="hint">from {key.lastUsedIp}</div> : null}
              </>
            ) : (
              'Never'
            ),
          title: (key) => (key.lastUsedIp ? `from ${key.lastUsedIp}` : undefined),
        },
        {
          id: 'state',
          label: 'State',
          cell: (key) => (
            <>
              <span className={`state state-${key.state}`}>{STATE_WORDS[key.state]}</span>
              <div className="hint">
                {key.expiresAt ? (
                  <>
                    {key.state === 'expired' ? 'expired ' : 'expires '}
                    <Time value={key.expiresAt} />
                  </>
                ) : (
                  'no expiry'
                )}
              </div>
            </>
          ),
        },
        {
          ...ACTIONS_COLUMN,
                    cell: (key) => (
            <>
              {key.state === 'active' ? (
                <>
                  {props.mayRotate(key) ? (
                    <>
                      <button type="button" onClick={() => props.onRotate(key)} aria-label={`Rotate ${key.name}`}>
                        Rotate
                      </button>{' '}
                    </>
                  ) : null}
                  <button type="button" className="quiet-danger" onClick={() => props.onRevoke(key)} aria-label={`Revoke ${key.name}`}>
                    Revoke
                  </button>{' '}
                </>
              ) : null}
              {props.onUndo ? (
                <button type="button" onClick={() => props.onUndo?.(key)} aria-label={`Undo changes of ${key.name}`}>
                  Undo changes…
                </button>
              ) : null}
            </>
          ),
        },
      ]}
      pager={props.pager}
    />
  );
}
