import { useState } from 'react';
import { api } from '../../api.js';
import type { SchemaCheck } from '../../api-types.js';
import { useApiQuery } from '../../query/useApiQuery.js';
import { useSession } from '../../session.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { collectionPath } from './collection-paths.js';

/**
 * How many stored records a version would refuse, shown before anyone activates it (a dry run over
 * the collection: `GET …/schemas/{version}/check`, read-only and bounded). Run at once for the
 * newest version, on request for older ones: each check reads up to 10,000 records.
 */
export function StoredRecordsCheck(props: { collection: string; version: number; auto: boolean }): React.JSX.Element | null {
  const session = useSession();
  const [asked, setAsked] = useState(props.auto);
  const path = collectionPath(props.collection, 'schemas', String(props.version), 'check');
  const allowed = session.can('records:read');
  const check = useApiQuery([path], (signal) => api<SchemaCheck>('GET', path, undefined, signal), { enabled: asked && allowed });
  if (!allowed) return null;
  if (!asked) {
    return (
      <p className="stored-check">
        <button type="button" onClick={() => setAsked(true)}>
          Count the stored records version {props.version} would refuse
        </button>
      </p>
    );
  }
  if (check.error) return <ErrorText error={check.error} />;
  if (!check.data) return <p className="stored-check hint">Checking the stored records against version {props.version}…</p>;
  const { checked, notMatching, complete, examples } = check.data;
  const counted = complete ? `${checked}` : `the first ${checked}`;
  return (
    <div className="stored-check" data-testid={`stored-check-${props.version}`}>
      <p className={notMatching > 0 ? 'warning' : 'hint'}>
        {notMatching === 0
          ? `Every one of ${counted} stored ${checked === 1 ? 'record matches' : 'records match'} version ${props.version}.`
          : `Version ${props.version} would refuse ${notMatching} of ${counted} stored ${checked === 1 ? 'record' : 'records'}.`}
        {complete ? '' : ' The check stopped there; there may be more.'}
      </p>
      {examples.length > 0 ? (
        <ul className="mismatch-examples" aria-label={`Stored records version ${props.version} would refuse`}>
          {examples.map((example) => (
            <li key={example.recordId}>
              <code>{example.recordId}</code>: {example.field} {example.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
