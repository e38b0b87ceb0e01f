import type { Collection } from '../../api-types.js';
import { SubmissionSnippets } from './SubmissionSnippets.js';
import { SubmissionsChart } from './SubmissionsChart.js';
import { SubmissionsPanel, submissionsOf } from './SubmissionsPanel.js';

/**
 * Public submissions on a collection's page: the settings, and once they are on, what to paste
 * into a web page and how many submissions came in. The chart stays after they are switched off,
 * for the day's submissions made before.
 */
export function SubmissionsSection(props: { collection: Collection; schema: unknown; canUpdate: boolean; onSaved: () => Promise<void> }): React.JSX.Element {
  const enabled = submissionsOf(props.collection).enabled;
  return (
    <>
      <SubmissionsPanel collection={props.collection} schema={props.schema} canUpdate={props.canUpdate} onSaved={props.onSaved} />
      {enabled ? <SubmissionSnippets collection={props.collection} schema={props.schema} /> : null}
      {enabled || submissionsOf(props.collection).origins.length > 0 ? <SubmissionsChart collection={props.collection.name} /> : null}
    </>
  );
}
