import { useState } from 'react';
import { api, loadAll, type Page } from '../../api.js';
import { useRoute, useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Time } from '../../ui/Time.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { CollectionTabs } from './CollectionTabs.js';
import { SchemaVersionForm } from './SchemaVersionForm.js';
import type { SchemaVersion } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import './data.css';

const STATE_WORDS: Record<SchemaVersion['state'], string> = {
  active: 'active: enforced',
  draft: 'draft: never active',
  off: 'off: was active',
};

/** `/collections/:name/schemas`: schema versions, newest first; create, activate, switch off. */
export function SchemasPage() {
  const { params } = useRoute();
  const name = params.name ?? '';
  useTitle(`${name}: schema versions`);
  const session = useSession();
  const versions = useApiQuery([collectionPath(name, 'schemas')], (signal): Promise<Page<SchemaVersion>> => loadAll<SchemaVersion>(collectionPath(name, 'schemas'), signal).then((data) => ({ data, nextCursor: null })));
  const [creating, setCreating] = useState(false);
  const [switchingOff, setSwitchingOff] = useState<SchemaVersion | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [activating, setActivating] = useState(false);
  const [notice, setNotice] = useState('');
  const canWrite = session.can('schemas:write');

  const list = versions.data?.data ?? [];
  const active = list.find((version) => version.state === 'active');

  async function activate(version: SchemaVersion) {
    setError(null);
    setActivating(true);
    try {
      await api('POST', collectionPath(name, 'schemas', String(version.version), 'activate'));
      setNotice('');
      await versions.reload();
    } catch (caught) {
      setError(caught);
    } finally {
      setActivating(false);
    }
  }

  async function switchOff(version: SchemaVersion) {
    await api('POST', collectionPath(name, 'schemas', String(version.version), 'deactivate'));
    setSwitchingOff(null);
    setNotice('');
    await versions.reload();
  }

  return (
    <div className="stack">
      <CollectionTabs name={name} title={`${name}: schema versions`} />
      {/* One line says which version is enforced, and is what a change announces: a second notice
          after activating or switching off would only say the same again. */}
      <p className="lead" role="status">
        {notice ? <span className="notice-inline">{notice} </span> : null}
        {active ? (
          <>Version <strong>{active.version}</strong> is active: every new or changed record must match it.</>
        ) : versions.data ? (
          'No version is active: any JSON object is accepted.'
        ) : null}
      </p>
      <ErrorText error={error} />
      <ErrorText error={versions.error} />
      {canWrite && !creating ? (
        <div className="actions">
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New schema version
          </button>
        </div>
      ) : null}
      {creating ? (
        <SchemaVersionForm
          collection={name}
          startFrom={list[0]?.schema ?? null}
          onCancel={() => setCreating(false)}
          onCreated={(version) => {
            setCreating(false);
            setNotice(version.state === 'active' ? '' : `Version ${version.version} is saved as a draft.`);
            void versions.reload();
          }}
        />
      ) : null}
      {versions.data && list.length === 0 ? <p className="empty">No schema versions yet.</p> : null}
      <ol className="versions" reversed aria-label="Schema versions, newest first">
        {list.map((version) => (
          <li key={version.id} className={`panel version ${version.state}`} aria-current={version.state === 'active' ? 'true' : undefined}>
            <div className="version-head">
              <h2>Version {version.version}</h2>
              <span className={`badge state-${version.state}`}>{STATE_WORDS[version.state]}</span>
              <span className="muted">created <Time value={version.createdAt} /></span>
              {canWrite ? (
                <span className="row-actions">
                  {version.state !== 'active' ? (
                    <button type="button" onClick={() => void activate(version)} disabled={activating} aria-busy={activating} aria-label={`Activate version ${version.version}`}>
                      Activate
                    </button>
                  ) : (
                    <button type="button" className="quiet-danger" onClick={() => setSwitchingOff(version)} aria-label={`Switch off version ${version.version}`}>
                      Switch off
                    </button>
                  )}
                </span>
              ) : null}
            </div>
            <details>
              <summary>Schema of version {version.version}</summary>
              <pre className="code">{JSON.stringify(version.schema, null, 2)}</pre>
            </details>
          </li>
        ))}
      </ol>
      <ConfirmDialog
        open={switchingOff !== null}
        title={`Switch off version ${switchingOff?.version ?? ''}?`}
        message="No schema will be enforced until you activate one: any JSON object will be accepted as a record. Records already stored do not change."
        confirmLabel="Switch off"
        danger
        onConfirm={() => (switchingOff ? switchOff(switchingOff) : undefined)}
        onCancel={() => setSwitchingOff(null)}
      />
    </div>
  );
}
