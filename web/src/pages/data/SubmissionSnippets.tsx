import { CodeSnippet } from '../../ui/CodeSnippet.js';
import type { Collection } from '../../api-types.js';
import { exampleRedirect, fetchSnippet, htmlFormSnippet, submissionsAction, type SnippetSettings } from './submission-snippets.js';
import { submissionsOf } from './SubmissionsPanel.js';

/**
 * What to paste into a web page once submissions are on: a plain HTML form posting to this
 * service's public address for the collection (by id), shaped like the active schema, and the
 * same post made with fetch. Built from the saved settings, not from the form being edited.
 */
export function SubmissionSnippets(props: { collection: Collection; schema: unknown }): React.JSX.Element {
  const submissions = submissionsOf(props.collection);
  const settings: SnippetSettings = {
    action: submissionsAction(window.location.origin, props.collection.id),
    schema: props.schema,
    honeypot: submissions.honeypot ?? null,
    redirect: exampleRedirect(submissions.origins),
    captcha: submissions.captcha?.provider ?? null,
  };
  return (
    <section className="panel stack" aria-labelledby="submission-snippets-title">
      <h2 id="submission-snippets-title">Collect from a web page</h2>
      <p className="hint">
        Paste the form into a page of an allowed site: each field becomes a field of the record, and after sending, the browser goes to the{' '}
        <code>redirect</code> page (change it to one of your own, on an allowed site).
        {settings.captcha ? ' Put your CAPTCHA site key in data-sitekey.' : ''}
      </p>
      <CodeSnippet title="HTML form" text={htmlFormSnippet(settings)} />
      <CodeSnippet title="JavaScript (fetch)" text={fetchSnippet(settings)} />
    </section>
  );
}
