import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { api, ApiError, apiVersioned, fieldErrors } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { Form, useForm } from '../../ui/Form.js';
import { fieldLines, lineAt, lineOfField } from './json-field-lines.js';
import type { RecordItem } from '../../api-types.js';
import { collectionPath } from './collection-paths.js';
import { noteOwnChange } from './own-changes.js';
import { RecordForm } from './RecordForm.js';
import { fieldProblem, formFields } from './schema-form.js';

interface Problem {
  field: string;
  message: string;
  line: number;
}

const EXAMPLE = '{\n  "name": "Ada Lovelace",\n  "email": "ada@example.com"\n}\n';

const asText = (data: unknown) => `${JSON.stringify(data, null, 2)}\n`;

/** The editor's text as the object the form edits, or null when it is not one. */
function asObject(text: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The record as it is saved now, found when a save came too late (412), and its ETag. */
interface Conflict {
  current: RecordItem;
  etag: string | null;
}

/**
 * Creates or edits a record as JSON. The schema's errors (422 details.errors, each naming a path
 * like data.age) are put beside the line of the field they are about, and listed under the editor
 * for screen readers. Saving an edit replaces the record's data (PUT) only over the version the
 * editor opened (If-Match with its ETag): if someone changed the record meanwhile, the API answers
 * 412 and the editor shows both versions, to reload the saved one or to overwrite it knowingly.
 */
export function RecordEditor(props: {
  collection: string;
  record: RecordItem | null;
  activeSchemaVersion: number | null;
  /** The active version's JSON Schema, once loaded: the form is generated from it. */
  schema?: unknown;
  onSaved: (record: RecordItem) => void;
  onClose: () => void;
}) {
  const [text, setText] = useState(() => (props.record ? asText(props.record.data) : props.activeSchemaVersion !== null && formFields(props.schema) ? '{}\n' : EXAMPLE));
  /** Why the record could not be read for editing. */
  const [openError, setOpenError] = useState<unknown>(null);
  const [problems, setProblems] = useState<Problem[]>([]);
  // The version being edited: read afresh on opening (the list may be older), sent as If-Match.
  const [etag, setEtag] = useState<string | null>(null);
  const [opening, setOpening] = useState(props.record !== null);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const recordPath = props.record ? collectionPath(props.collection, 'records', props.record.id) : null;
  const textarea = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const titleId = useId();
  const listId = useId();
  const fields = useMemo(() => (props.activeSchemaVersion === null ? null : formFields(props.schema)), [props.activeSchemaVersion, props.schema]);
  // The form when the schema describes the record; the JSON editor, one click away, for the rest.
  const [mode, setMode] = useState<'form' | 'json'>(fields ? 'form' : 'json');
  const [checkAll, setCheckAll] = useState(false);
  /** The person picked Form or JSON themselves: a schema that arrives late no longer switches for them. */
  const chose = useRef(false);
  const formData = useMemo(() => asObject(text), [text]);

  useEffect(() => {
    if (mode === 'json') textarea.current?.focus();
  }, [mode]);

  // Opened before the active schema was loaded: the form, once it can be made.
  useEffect(() => {
    if (!fields || chose.current || mode === 'form') return;
    const start = !props.record && text === EXAMPLE ? '{}\n' : text;
    if (!asObject(start)) return;
    setText(start);
    setMode('form');
  }, [fields]); // Only when the schema arrives, not on every keystroke.

  useEffect(() => {
    if (!recordPath) return;
    let current = true;
    apiVersioned<RecordItem>('GET', recordPath)
      .then(({ body, etag: opened }) => {
        if (!current) return;
        setText(asText(body.data));
        setEtag(opened);
      })
      .catch((caught: unknown) => current && setOpenError(caught))
      .finally(() => current && setOpening(false));
    return () => {
      current = false;
    };
  }, [recordPath]);

  /** Saves `data` over the version `ifMatch`; a 412 shows what is saved now instead. */
  async function replace(data: unknown, ifMatch: string | null): Promise<RecordItem | null> {
    try {
      return (await apiVersioned<RecordItem>('PUT', recordPath!, { body: { data }, ifMatch })).body;
    } catch (caught) {
      if (!(caught instanceof ApiError && caught.status === 412)) throw caught;
      const { body, etag: now } = await apiVersioned<RecordItem>('GET', recordPath!);
      setConflict({ current: body, etag: now });
      return null;
    }
  }

  /** The conflict's "Overwrite with my version": its own busy state and error, inside the conflict panel. */
  const overwrite = useForm(async () => {
    if (!conflict) return;
    // Over the version the person has just seen: a change made after that is a new conflict.
    const saved = await replace(JSON.parse(text), conflict.etag);
    if (saved) {
      noteOwnChange('record.updated', saved.id);
      props.onSaved(saved);
    }
  });

  function reload() {
    if (!conflict) return;
    setText(asText(conflict.current.data));
    setEtag(conflict.etag);
    setConflict(null);
    setProblems([]);
    form.clear();
    overwrite.clear();
  }

  /** To the form only from an object the form can hold; the JSON says what is wrong otherwise. */
  function switchTo(next: 'form' | 'json') {
    chose.current = true;
    if (next === 'form' && !asObject(text)) {
      setProblems([{ field: 'data', message: 'The form needs the JSON to be one valid object; fix it here first.', line: 0 }]);
      return;
    }
    if (next === 'json') setProblems((previous) => previous.map((problem) => ({ ...problem, line: lineOfField(fieldLines(text), problem.field) })));
    setMode(next);
  }

  // Each problem is said once: beside its field in the form (RecordForm), in the list otherwise.
  const besideFields = new Set(mode === 'form' && fields ? fields.map((field) => `data.${field.name}`) : []);
  const listed = problems.filter((problem) => !besideFields.has(problem.field));

  const lineCount = useMemo(() => text.split('\n').length, [text]);
  const byLine = useMemo(() => {
    const map = new Map<number, Problem[]>();
    for (const problem of problems) map.set(problem.line, [...(map.get(problem.line) ?? []), problem]);
    return map;
  }, [problems]);

  /**
   * Saves the record. What the browser or the schema finds wrong is listed by field (`problems`),
   * not thrown: the form's one error would only say it again.
   */
  const form = useForm(async () => {
    setProblems([]);
    if (mode === 'form' && fields && formData) {
      // The browser's own checks first: each field says what is wrong, and nothing is sent.
      setCheckAll(true);
      const wrong = fields.flatMap((field) => {
        const message = fieldProblem(field, formData[field.name]);
        return message ? [{ field: `data.${field.name}`, message, line: 0 }] : [];
      });
      if (wrong.length) {
        setProblems(wrong);
        return;
      }
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (parseError) {
      const message = (parseError as Error).message;
      const position = /position (\d+)/.exec(message);
      setProblems([{ field: 'data', message: `Not valid JSON: ${message}`, line: position ? lineAt(text, Number(position[1])) : 0 }]);
      return;
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      setProblems([{ field: 'data', message: 'A record is one JSON object, like {"name": "Ada"}.', line: 0 }]);
      return;
    }
    try {
      const saved = props.record ? await replace(data, etag) : await api<RecordItem>('POST', collectionPath(props.collection, 'records'), { data });
      if (saved) {
        noteOwnChange(props.record ? 'record.updated' : 'record.created', saved.id);
        props.onSaved(saved);
      }
    } catch (caught) {
      const fields = fieldErrors(caught).filter((entry) => entry.field === 'data' || entry.field.startsWith('data.'));
      if (!(caught instanceof ApiError && fields.length > 0)) throw caught;
      const lines = fieldLines(text);
      setProblems(fields.map((entry) => ({ ...entry, message: entry.message || caught.message, line: lineOfField(lines, entry.field) })));
    }
  });

  return (
    <Form
      form={form}
      className="panel stack record-editor"
      title={props.record ? `Edit record ${props.record.id}` : 'New record'}
      titleId={titleId}
      submitLabel={opening ? 'Opening…' : props.record ? 'Save record' : 'Create record'}
      busyLabel="Saving…"
      disabled={opening || conflict !== null}
      onCancel={props.onClose}
    >
      <p className="hint">
        {mode === 'form' ? 'One field for each property of the schema.' : "The record's data as one JSON object."}{' '}
        {props.activeSchemaVersion === null
          ? 'No schema version is active: any object is accepted.'
          : `It must match schema version ${props.activeSchemaVersion}; errors appear beside the field they are about.`}
      </p>
      {fields ? (
        <div className="toolbar" role="group" aria-label="Edit as">
          <button type="button" aria-pressed={mode === 'form'} onClick={() => switchTo('form')}>
            Form
          </button>
          <button type="button" aria-pressed={mode === 'json'} onClick={() => switchTo('json')}>
            JSON
          </button>
        </div>
      ) : null}
      {mode === 'form' && fields && formData ? (
        <RecordForm
          fields={fields}
          data={formData}
          onChange={(next) => {
            setText(asText(next));
            setProblems((previous) => previous.filter((problem) => !problem.field.startsWith('data.')));
          }}
          serverProblems={new Map(problems.filter((problem) => problem.field.startsWith('data.')).map((problem) => [problem.field.slice(5), problem.message]))}
          checkAll={checkAll}
          disabled={opening}
        />
      ) : null}
      {mode === 'json' ? (
        <>
          <label htmlFor={`${titleId}-json`}>Data (JSON)</label>
          <div className="json-editor">
            <textarea
              id={`${titleId}-json`}
              ref={textarea}
              value={text}
              readOnly={opening}
              onChange={(event) => setText(event.target.value)}
              onScroll={(event) => {
                if (gutter.current) gutter.current.scrollTop = event.currentTarget.scrollTop;
              }}
              rows={Math.min(24, Math.max(8, lineCount + 1))}
              wrap="off"
              spellCheck={false}
              autoCapitalize="off"
              autoComplete="off"
              aria-invalid={problems.length > 0 || undefined}
              aria-describedby={problems.length > 0 ? listId : undefined}
            />
            {/* Beside the text: each error on the line of its field. The list below says the same for screen readers. */}
            <div className="json-gutter" ref={gutter} aria-hidden="true" data-testid="field-errors-beside">
              {Array.from({ length: lineCount + 1 }, (_, line) => (
                <div key={line} className="json-gutter-line" data-line={line + 1}>
                  {(byLine.get(line) ?? []).map((problem) => `${shortName(problem.field)} ${problem.message}`).join('; ')}
                </div>
              ))}
            </div>
          </div>
        </>
      ) : null}
      {listed.length > 0 ? (
        <ul id={listId} className="field-errors" role="alert" aria-label="Problems in the record">
          {listed.map((problem, index) => (
            <li key={index}>
              <strong>{problem.field}</strong>
              {mode === 'json' ? ` (line ${problem.line + 1})` : ''}: {problem.message}
            </li>
          ))}
        </ul>
      ) : null}
      {listed.length < problems.length ? (
        <p className="error" role="alert">
          {problems.length - listed.length === 1 ? 'One field above needs' : `${problems.length - listed.length} fields above need`} a change before the record can be saved.
        </p>
      ) : null}
      <ErrorText error={openError} />
      {conflict ? <ConflictPanel mine={text} conflict={conflict} busy={overwrite.busy} error={overwrite.error} onReload={reload} onOverwrite={() => void overwrite.send()} /> : null}
    </Form>
  );
}

/**
 * The two versions side by side after a save came too late: the person's, not saved, and the one
 * saved meanwhile. Reloading takes the saved one (the person's changes are dropped); overwriting
 * saves theirs over it, knowing what it replaces.
 */
function ConflictPanel(props: { mine: string; conflict: Conflict; busy: boolean; error: unknown; onReload: () => void; onOverwrite: () => void }) {
  const titleId = useId();
  const { current, etag } = props.conflict;
  return (
    <div className="conflict stack" role="alert" aria-labelledby={titleId}>
      <h3 id={titleId}>This record was changed while you were editing it</h3>
      <p>
        Your changes are not saved. Someone (or a program) saved another version
        {etag ? ` (revision ${etag.replaceAll('"', '')}, ${new Date(current.updatedAt).toLocaleString()})` : ''}. Compare them, then reload the
        saved version, which drops your changes, or save yours over it.
      </p>
      <div className="conflict-versions">
        <figure>
          <figcaption>Your version (not saved)</figcaption>
          <pre data-testid="conflict-mine">{props.mine}</pre>
        </figure>
        <figure>
          <figcaption>Saved version</figcaption>
          <pre data-testid="conflict-saved">{asText(current.data)}</pre>
        </figure>
      </div>
      <ErrorText error={props.error} />
      <div className="actions">
        <button type="button" onClick={props.onReload} disabled={props.busy}>
          Reload the saved version
        </button>
        <button type="button" className="danger" onClick={props.onOverwrite} disabled={props.busy} aria-busy={props.busy}>
          Overwrite with my version
        </button>
      </div>
    </div>
  );
}

/** `data.address.city` → `address.city`: the gutter is beside the JSON, where `data` is the whole text. */
function shortName(field: string): string {
  return field === 'data' ? '' : field.replace(/^data\./, '');
}
