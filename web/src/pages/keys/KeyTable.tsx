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
}): React.JSX.Element {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">API keys</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Scopes</th>
            <th scope="col">Collections</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
            <th scope="col"><span className="visually-hidden">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((key) => (
            <tr key={key.id}>
              <th scope="row">
                {key.name}
                {key.mode === 'test' ? (
                  <>
                    {' '}
                    <span className="badge">test</span>
                  </>
                ) : null}
                <small className="hint owner">{props.ownerOf(key)}</small>
              </th>
              <td>
                <code className="preview">
                  <BreakableToken token={key.preview} />
                </code>
              </td>
              <td>
                <ul className="plain-list">
                  {key.scopes.map((scope) => (
                    <li key={scope}>
                      <code>{scope}</code>
                    </li>
                  ))}
                </ul>
              </td>
              <td>{key.collections ? key.collections.map(props.collectionName).join(', ') : 'All'}</td>
              <td>
                {key.lastUsedAt ? (
                  <>
                    <Time value={key.lastUsedAt} />
                    {key.lastUsedIp ? <div className="hint">from {key.lastUsedIp}</div> : null}
                  </>
                ) : (
                  'Never'
                )}
              </td>
              <td>
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
              </td>
              <td className="row-actions">
                {key.state === 'active' ? (
                  <>
                    {props.mayRotate(key) ? (
                      <button type="button" onClick={() => props.onRotate(key)} aria-label={`Rotate ${key.name}`}>
                        Rotate
                      </button>
                    ) : null}
                    <button type="button" className="quiet-danger" onClick={() => props.onRevoke(key)} aria-label={`Revoke ${key.name}`}>
                      Revoke
                    </button>
                  </>
                ) : null}
                {props.onUndo ? (
                  <button type="button" onClick={() => props.onUndo?.(key)} aria-label={`Undo changes of ${key.name}`}>
                    Undo changes…
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A token preview may wrap after each "_" (where a person reads the parts), never inside the kid. */
function BreakableToken(props: { token: string }): React.JSX.Element {
  const parts = props.token.split(/(?<=_)/);
  return (
    <>
      {parts.map((part, index) => (
        <span key={index}>
          {part}
          {index < parts.length - 1 ? <wbr /> : null}
        </span>
      ))}
    </>
  );
}
