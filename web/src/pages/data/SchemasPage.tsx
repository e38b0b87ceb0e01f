import { useState } from 'react';
import { api, loadAll, type Page } from '../../api.js';
import { useRoute, useTitle } from '../../router.js';
import { useSession } from '../../session.js';
import { ConfirmDialog } from '../../ui/ConfirmDialog.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Time } from '../../ui/Time.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { CollectionTabs } from './CollectionTabs.js';
import { SchemaDiffView } from './SchemaDiffView.js';
import { SchemaVersionForm } from './SchemaVersionForm.js';
import { StoredRecordsCheck } from './StoredRecordsCheck.js';
import type { SchemaCheck, SchemaVersion } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import './data.css';

const STATE_WORDS: Record<SchemaVersion['state'], string> = {
  active: 'active: enforced',
  draft: 'draft: never active',
  off: 'off: was active',
};

/**
 * `/collections/:name/schemas`: schema versions, newest first, each with what it changes from the
 * one before and (when not active) how many stored records it would refuse; create, activate,
 * switch off.
 */
export function SchemasPage() {
  const { params } = useRoute();
  const name = params.name ?? '';
  useTitle(`${name}: schema versions`);
  const session = useSession();
  const versions = useApiQuery([collectionPath(name, 'schemas')], (signal): Promise<Page<SchemaVersion>> => loadAll<SchemaVersion>(collectionPath(name, 'schemas'), signal).then((data) => ({ data, nextCursor: null })));
  const [creating, setCreating] = useState(false);
  const [switchingOff, setSwitchingOff] = useState<SchemaVersion | null>(null);
  /** A version that stored records would not match, waiting for the person to confirm activating it. */
  const [confirming, setConfirming] = useState<{ version: SchemaVersion; check: SchemaCheck } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [activating, setActivating] = useState(false);
  const [notice, setNotice] = useState('');
  const canWrite = session.can('schemas:write');

  const list = versions.data?.data ?? [];
  const active = list.find((version) => version.state === 'active');

  /**
   * Activating never re-checks stored records, so first count those the version would refuse:
   * none, and it is activated at once; some, and the person is asked, with the count.
   */
  async function askActivate(version: SchemaVersion) {
    setError(null);
    setActivating(true);
    try {
      const check = await api<SchemaCheck>('GET', collectionPath(name, 'schemas', String(version.version), 'check'));
      if (check.notMatching > 0 || !check.complete) setConfirming({ version, check });
      else await activate(version);
    } catch (caught) {
      setError(caught);
    } finally {
      setActivating(false);
    }
  }

  async function activate(version: SchemaVersion) {
    await api('POST', collectionPath(name, 'schemas', String(version.version), 'activate'));
    setConfirming(null);
    setNotice('');
    await versions.reload();
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
          previous={list[0] ?? null}
          onCancel={() => setCreating(false)}
          onCreated={(version, andActivate) => {
            setCreating(false);
            setNotice(`Version ${version.version} is saved as a draft.`);
            void versions.reload();
            if (andActivate) void askActivate(version);
          }}
        />
      ) : null}
      {versions.data && list.length === 0 ? <p className="empty">No schema versions yet.</p> : null}
      <ol className="versions" reversed aria-label="Schema versions, newest first">
        {list.map((version, index) => (
          <li key={version.id} className={`panel version ${version.state}`} aria-current={version.state === 'active' ? 'true' : undefined}>
            <div className="version-head">
              <h2>Version {version.version}</h2>
              <span className={`badge state-${version.state}`}>{STATE_WORDS[version.state]}</span>
              <span className="muted">created <Time value={version.createdAt} /></span>
              {canWrite ? (
                <span className="row-actions">
                  {version.state !== 'active' ? (
                    <button type="button" onClick={() => void askActivate(version)} disabled={activating} aria-busy={activating} aria-label={`Activate version ${version.version}`}>
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
            {version.state !== 'active' ? <StoredRecordsCheck collection={name} version={version.version} auto={index === 0} /> : null}
            {list[index + 1] ? <SchemaDiffView before={list[index + 1]!.schema} after={version.schema} title={`Changes from version ${list[index + 1]!.version}`} /> : null}
            <details>
              <summary>Schema of version {version.version}</summary>
              <pre className="code">{JSON.stringify(version.schema, null, 2)}</pre>
            </details>
          </li>
        ))}
      </ol>
      <ConfirmDialog
        open={confirming !== null}
        title={`Activate version ${confirming?.version.version ?? ''}?`}
        message={confirming ? <MismatchWarning check={confirming.check} collection={name} /> : null}
        confirmLabel="Activate anyway"
        onConfirm={() => (confirming ? activate(confirming.version) : undefined)}
        onCancel={() => setConfirming(null)}
      />
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

/** How many stored records the version would refuse, and the first few with their reason. */
function MismatchWarning({ check, collection }: { check: SchemaCheck; collection: string }): React.JSX.Element {
  const counted = check.complete ? `${check.checked}` : `the first ${check.checked}`;
  return (
    <>
      <p>
        {check.notMatching === 1 ? '1 record' : `${check.notMatching} records`} of {counted} in {collection} would not match version {check.version}
        {check.complete ? '' : ' (the check stopped there; there may be more)'}. They stay as they are, but each must be fixed to match before it
        can be changed again.
      </p>
      {check.examples.length > 0 ? (
        <ul className="mismatch-examples" aria-label="Records that would not match">
          {check.examples.map((example) => (
            <li key={example.recordId}>
              <code>{example.recordId}</code>: {example.field} {example.message}
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}
