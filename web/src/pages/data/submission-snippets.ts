import { exampleRecord } from './example-record.js';
import { formFields, type FormField } from './schema-form.js';

/**
 * What a site owner pastes into their page to collect into a collection without a key: a plain
 * HTML form that posts to the public submissions address, and the same submission made with
 * fetch. Both are text to copy; every name and value from the schema or the settings is escaped,
 * since a property may be named anything.
 */

export type CaptchaProvider = 'turnstile' | 'hcaptcha';

export interface SnippetSettings {
  /** The public submissions address: the service's URL + /v1/collections/{col_id}/records. */
  action: string;
  /** The collection's active schema, or null: its top-level properties become the form's fields. */
  schema: unknown;
  honeypot: string | null;
  /** Where the browser goes after a form post (a page on an allowed origin). */
  redirect: string;
  captcha: CaptchaProvider | null;
}

/** How each provider's widget is put on a page, and how a script reads its token. */
const CAPTCHA_WIDGETS: Record<CaptchaProvider, { script: string; widgetClass: string; tokenCall: string }> = {
  turnstile: { script: 'https://challenges.cloudflare.com/turnstile/v0/api.js', widgetClass: 'cf-turnstile', tokenCall: 'turnstile.getResponse()' },
  hcaptcha: { script: 'https://js.hcaptcha.com/1/api.js', widgetClass: 'h-captcha', tokenCall: 'hcaptcha.getResponse()' },
};

/** Text and attribute values in HTML: nothing typed into a schema or a setting can end a tag or an attribute. */
export function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
}

/** The public submissions address of a collection, by id: renaming the collection does not break pasted forms. */
export function submissionsAction(serviceUrl: string, collectionId: string): string {
  return `${serviceUrl.replace(/\/+$/, '')}/v1/collections/${encodeURIComponent(collectionId)}/records`;
}

/**
 * A page of the site to come back to after a form post: on the first allowed origin, or a
 * placeholder to change when any origin (or none yet) is allowed.
 */
export function exampleRedirect(origins: readonly string[]): string {
  const first = origins.find((origin) => origin !== '*');
  return `${first ?? 'https://your-site.example'}/thanks`;
}

/** The complete HTML form: one labelled input per schema property (one example field without a schema). */
export function htmlFormSnippet(settings: SnippetSettings): string {
  const fields = formFields(settings.schema) ?? [exampleField()];
  const lines = [`<form method="post" action="${escapeHtml(settings.action)}">`];
  for (const field of fields) {
    const controls = isObjectProperty(settings.schema, field.name)
      ? [`<!-- ${escapeHtml(field.name)} holds an object, which a plain form cannot send: use the fetch snippet for it. -->`]
      : fieldLines(field);
    lines.push(...controls.map((line) => `  ${line}`));
  }
  if (settings.honeypot) {
    lines.push(
      '  <!-- Left empty by people, filled in by bots: a submission with it filled in is not kept. -->',
      '  <div style="position: absolute; left: -10000px" aria-hidden="true">',
      `    <input type="text" name="${escapeHtml(settings.honeypot)}" tabindex="-1" autocomplete="off">`,
      '  </div>',
    );
  }
  if (settings.captcha) lines.push(`  <div class="${CAPTCHA_WIDGETS[settings.captcha].widgetClass}" data-sitekey="YOUR_SITE_KEY"></div>`);
  lines.push(
    '  <!-- Where the browser goes afterwards, a page on an allowed origin; a refusal adds ?error=CODE to it. -->',
    `  <input type="hidden" name="redirect" value="${escapeHtml(settings.redirect)}">`,
    '  <button type="submit">Send</button>',
    '</form>',
  );
  if (settings.captcha) lines.push(`<script src="${CAPTCHA_WIDGETS[settings.captcha].script}" async defer></script>`);
  return lines.join('\n');
}

/** The same submission from a script on an allowed origin, as JSON; the answer is the new record's summary. */
export function fetchSnippet(settings: SnippetSettings): string {
  const data = JSON.stringify(exampleRecord(settings.schema), null, 2).replaceAll('\n', '\n    ');
  return [
    `const response = await fetch(${JSON.stringify(settings.action)}, {`,
    `  method: 'POST',`,
    `  headers: { 'Content-Type': 'application/json' },`,
    `  body: JSON.stringify({`,
    `    data: ${data},`,
    ...(settings.captcha ? [`    captchaToken: ${CAPTCHA_WIDGETS[settings.captcha].tokenCall},`] : []),
    `  }),`,
    `});`,
    `if (!response.ok) {`,
    `  const { error } = await response.json();`,
    '  throw new Error(`${error.code}: ${error.message}`);',
    `}`,
    `const created = await response.json(); // { id, collectionId, revision, createdAt, … }`,
  ].join('\n');
}

/** Whether the schema's property is an object (a form sends only text, repeated for a list). */
function isObjectProperty(schema: unknown, name: string): boolean {
  const properties = (schema as { properties?: Record<string, unknown> } | null)?.properties;
  const property = properties && Object.hasOwn(properties, name) ? (properties[name] as { type?: unknown } | null) : null;
  const types = Array.isArray(property?.type) ? property.type : [property?.type];
  return types.includes('object');
}

function exampleField(): FormField {
  return { name: 'name', label: 'Name', description: null, kind: 'text', required: true, choices: [], minimum: null, maximum: null, minLength: null, maxLength: null, pattern: null };
}

/** One labelled control of the kind the property asks for; what a form cannot carry well is a text area of JSON. */
function fieldLines(field: FormField): string[] {
  const name = escapeHtml(field.name);
  const label = escapeHtml(field.label);
  const required = field.required ? ' required' : '';
  switch (field.kind) {
    case 'choice':
      return [
        `<label>${label}`,
        `  <select name="${name}"${required}>`,
        ...field.choices.map((choice) => `    <option>${escapeHtml(typeof choice === 'string' ? choice : JSON.stringify(choice))}</option>`),
        '  </select>',
        '</label>',
      ];
    case 'boolean':
      return [`<label><input type="checkbox" name="${name}" value="true"> ${label}</label>`];
    case 'json':
    case 'long-text':
      return [`<label>${label} <textarea name="${name}"${field.maxLength !== null ? ` maxlength="${field.maxLength}"` : ''}${required}></textarea></label>`];
    default: {
      // A date-time stays text: the browser's picker sends no time zone, which the schema requires.
      const type = field.kind === 'email' || field.kind === 'url' || field.kind === 'date' ? field.kind : field.kind === 'integer' || field.kind === 'number' ? 'number' : 'text';
      const limits = [
        field.kind === 'number' ? ' step="any"' : '',
        field.minimum !== null ? ` min="${field.minimum}"` : '',
        field.maximum !== null ? ` max="${field.maximum}"` : '',
        field.maxLength !== null ? ` maxlength="${field.maxLength}"` : '',
      ].join('');
      return [`<label>${label} <input type="${type}" name="${name}"${limits}${required}></label>`];
    }
  }
}
