import { useEffect, useId, useMemo, useRef, useState, type FormEvent } from 'react';
import { api, ApiError, fieldErrors } from '../../api.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { FormActions } from '../../ui/FormActions.js';
import { fieldLines, lineAt, lineOfField } from './json-field-lines.js';
import { collectionPath, type RecordItem } from './types.js';

interface Problem {
  field: string;
  message: string;
  line: number;
}

const EXAMPLE = '{\n  "name": "Ada Lovelace",\n  "email": "ada@example.com"\n}\n';

/**
 * Creates or edits a record as JSON. The schema's errors (422 details.errors, each naming a path
 * like data.age) are put beside the line of the field they are about, and listed under the editor
 * for screen readers. Saving an edit replaces the record's data (PUT).
 */
export function RecordEditor(props: {
  collection: string;
  record: RecordItem | null;
  activeSchemaVersion: number | null;
  onSaved: (record: RecordItem) => void;
  onClose: () => void;
}) {
  const [text, setText] = useState(() => (props.record ? `${JSON.stringify(props.record.data, null, 2)}\n` : EXAMPLE));
  const [error, setError] = useState<unknown>(null);
  const [problems, setProblems] = useState<Problem[]>([]);
  const [busy, setBusy] = useState(false);
  const textarea = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const titleId = useId();
  const listId = useId();

  useEffect(() => {
    textarea.current?.focus();
  }, []);

  const lineCount = useMemo(() => text.split('\n').length, [text]);
  const byLine = useMemo(() => {
    const map = new Map<number, Problem[]>();
    for (const problem of problems) map.set(problem.line, [...(map.get(problem.line) ?? []), problem]);
    return map;
  }, [problems]);

  async function save(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setProblems([]);
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
    setBusy(true);
    try {
      const saved = props.record
        ? await api<RecordItem>('PUT', collectionPath(props.collection, 'records', props.record.id), { data })
        : await api<RecordItem>('POST', collectionPath(props.collection, 'records'), { data });
      props.onSaved(saved);
    } catch (caught) {
      const fields = fieldErrors(caught).filter((entry) => entry.field === 'data' || entry.field.startsWith('data.'));
      if (caught instanceof ApiError && fields.length > 0) {
        const lines = fieldLines(text);
        setProblems(fields.map((entry) => ({ ...entry, message: entry.message || caught.message, line: lineOfField(lines, entry.field) })));
      }
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="panel stack record-editor" aria-labelledby={titleId}>
      <h2 id={titleId}>{props.record ? `Edit record ${props.record.id}` : 'New record'}</h2>
      <p className="hint">
        The record's data as one JSON object.{' '}
        {props.activeSchemaVersion === null
          ? 'No schema version is active: any object is accepted.'
          : `It must match schema version ${props.activeSchemaVersion}; errors appear beside the field they are about.`}
      </p>
      <form className="stack" onSubmit={save}>
        <label htmlFor={`${titleId}-json`}>Data (JSON)</label>
        <div className="json-editor">
          <textarea
            id={`${titleId}-json`}
            ref={textarea}
            value={text}
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
        {problems.length > 0 ? (
          <ul id={listId} className="field-errors" role="alert" aria-label="Problems in the record">
            {problems.map((problem, index) => (
              <li key={index}>
                <strong>{problem.field}</strong> (line {problem.line + 1}): {problem.message}
              </li>
            ))}
          </ul>
        ) : null}
        {problems.length === 0 ? <ErrorText error={error} /> : null}
        {error && problems.length > 0 ? <p className="error">{(error as Error).message}</p> : null}
        <FormActions label={props.record ? 'Save record' : 'Create record'} busyLabel="Saving…" busy={busy} onCancel={props.onClose} />
      </form>
    </section>
  );
}

/** `data.address.city` → `address.city`: the gutter is beside the JSON, where `data` is the whole text. */
function shortName(field: string): string {
  return field === 'data' ? '' : field.replace(/^data\./, '');
}
