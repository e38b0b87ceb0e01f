import { diffSchemas, isEmptyDiff } from './schema-diff.js';

/** What a version changes from an earlier one, in words: fields added, removed, changed. */
export function SchemaDiffView(props: { before: unknown; after: unknown; title: string }): React.JSX.Element {
  const diff = diffSchemas(props.before, props.after);
  return (
    <section className="schema-diff" aria-label={props.title}>
      <h3>{props.title}</h3>
      {isEmptyDiff(diff) ? (
        <p className="hint">No change.</p>
      ) : (
        <ul>
          {diff.added.map((entry) => (
            <li key={`+${entry.path}`} className="diff-added">
              Added <strong>{entry.path}</strong>: {entry.summary}
            </li>
          ))}
          {diff.removed.map((entry) => (
            <li key={`-${entry.path}`} className="diff-removed">
              Removed <strong>{entry.path}</strong> ({entry.summary})
            </li>
          ))}
          {diff.changed.map((entry) => (
            <li key={`~${entry.path}`} className="diff-changed">
              Changed <strong>{entry.path}</strong>: {entry.changes.join('; ')}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
