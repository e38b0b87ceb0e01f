import { useEffect, useId, useRef, useState } from 'react';
import { api } from '../../api.js';
import { Link } from '../../router.js';
import { ErrorText } from '../../ui/ErrorText.js';
import { DataTable } from '../../ui/DataTable.js';
import { Field } from '../../ui/Field.js';
import { useForm } from '../../ui/Form.js';
import { Time } from '../../ui/Time.js';
import type { ApiKey, RevertInput, RevertResult } from '../../api-types.js';

/** Conflicts listed one a row; past this many the list says how many more there are. */
const SHOWN_CONFLICTS = 50;
/** The most conflicts the service lists in one answer (docs/history.md); a list this long may have left some out. */
const LISTED_AT_MOST = 10_000;

/** Why a record was left alone, in words (the API's reason codes; an unknown one is shown as it is). */
const REASON_WORDS: Record<string, string> = {
  changed_by_other: 'changed by someone else since',
  changed_after_window: 'changed again after the time undone',
  history_gone: 'its earlier version is no longer kept',
  collection_in_trash: 'its collection is in the trash',
};

/** A `datetime-local` value (the person's local time, to the second) for a moment. */
function localInput(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** What is wrong with a moment to undo from, in words; undefined when it is fine. */
function problemWithMoment(local: string): string | undefined {
  const instant = toInstant(local);
  if (!instant) return 'Give a date and time.';
  if (new Date(instant).getTime() > Date.now()) return 'Give a moment in the past.';
  return undefined;
}

/** `datetime-local` input value (the person's local time) to the API's UTC timestamp; undefined when it is not one. */
function toInstant(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function reasonWords(conflict: RevertResult['conflicts'][number]): string {
  return REASON_WORDS[conflict.reason] ?? conflict.reason;
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** The changes a revert made ("3 records put back"), or would make ("put back 3 records"), as parts of one sentence. */
function changeWords(result: RevertResult, would: boolean): string[] {
  const records = (count: number) => plural(count, 'record', 'records');
  const words: string[] = [];
  if (result.reverted) words.push(would ? `put back the data of ${records(result.reverted)}` : `the data of ${records(result.reverted)} put back`);
  if (result.trashed) words.push(would ? `move ${records(result.trashed)} it created to the trash` : `${records(result.trashed)} it created moved to the trash`);
  if (result.restored) words.push(would ? `restore ${records(result.restored)} it trashed` : `${records(result.restored)} it trashed restored`);
  return words;
}

function joinWords(words: string[]): string {
  return words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

/**
 * Undoes what one key changed since a moment: the person picks the moment, the service first counts
 * what would change (a dry run, nothing written) and which records it would leave alone, and only
 * "Undo these changes" does it. A modal <dialog> like ConfirmDialog: Escape and Cancel close it,
 * except while it undoes (a count writes nothing, so leaving during one loses nothing). Owners and admins only (the API decides; the keys page offers it to them).
 */
export function UndoKeyDialog(props: { apiKey: ApiKey; collectionName: (id: string) => string; onClose: () => void }): React.JSX.Element {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const key = props.apiKey;
  const [since, setSince] = useState(() => localInput(new Date(Date.now() - 24 * 3600_000)));
  /** Set once the person asked for a step: from then on the moment says what is wrong with it. */
  const [asked, setAsked] = useState(false);
  const sinceProblem = asked ? problemWithMoment(since) : undefined;
  const [checked, setChecked] = useState<RevertResult | null>(null);
  const [done, setDone] = useState<RevertResult | null>(null);

  /** The request for the moment given, or undefined when the moment is not one (its field says why). */
  const input = (): RevertInput | undefined => {
    setAsked(true);
    const instant = toInstant(since);
    if (!instant || problemWithMoment(since)) return undefined;
    return { actor: { type: 'key', id: key.id }, since: instant };
  };
  const revert = (body: RevertInput, dryRun: boolean) => api<RevertResult>('POST', '/v1/history/revert', { ...body, dryRun });

  // Two steps, a form each: counting (nothing written) and then undoing for real.
  const check = useForm(async () => {
    const body = input();
    if (!body) return;
    undo.clear();
    setDone(null);
    setChecked(await revert(body, true));
  });
  const undo = useForm(async () => {
    const body = input();
    if (body) setDone(await revert(body, false));
  });
  const busy = check.busy || undo.busy;

  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
    return () => element?.close();
  }, []);

  // One error on screen at a time: the last step's (a new step clears the one before).
  const error = undo.error ?? check.error;
  const shown = done ?? checked;
  const total = shown ? shown.reverted + shown.trashed + shown.restored : 0;

  return (
    <dialog
      ref={dialog}
      className="dialog undo-dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (!undo.busy) props.onClose();
      }}
    >
      <h2 id={titleId}>Undo the changes of “{key.name}”</h2>
      {!done ? (
        <form
          aria-label="Undo since"
          onSubmit={(event) => void check.send(event)}
        >
          <p>
            Every record this key created, changed or trashed since the moment you give goes back to how it was before: its data is put back, records it
            created go to the trash, records it trashed come back. Records someone else changed after it are left alone and listed.
          </p>
          <Field label="Undo changes since" hint="In your local time, to the second. Everything the key did from then until now is undone." error={sinceProblem}>
            <input
              type="datetime-local"
              step={1}
              value={since}
              required
              disabled={busy}
              onChange={(event) => {
                setSince(event.target.value);
                // A new moment needs a new check before anything is undone.
                setChecked(null);
                setDone(null);
                check.clear();
                undo.clear();
              }}
            />
          </Field>
          {!checked ? (
            <div className="actions">
              <button type="button" onClick={props.onClose} disabled={undo.busy}>
                Cancel
              </button>
              <button type="submit" className="primary" disabled={busy} aria-busy={check.busy}>
                {check.busy ? 'Checking…' : 'Check what would be undone'}
              </button>
            </div>
          ) : null}
        </form>
      ) : null}

      {shown ? (
        <section aria-label={done ? 'Undo result' : 'What would be undone'} className="undo-summary">
          {done ? (
            <p role="status">
              <strong>{total === 0 ? 'Nothing was undone.' : `Undone: ${joinWords(changeWords(done, false))}.`}</strong>
            </p>
          ) : (
            <p role="status">
              {total === 0 ? (
                <strong>Nothing to undo: this key changed no record since then that can be put back.</strong>
              ) : (
                <>
                  <strong>Undoing would {joinWords(changeWords(shown, true))}.</strong> Nothing has changed yet.
                </>
              )}
            </p>
          )}
          <Conflicts result={shown} collectionName={props.collectionName} />
        </section>
      ) : null}

      <ErrorText error={error} />

      {checked && !done ? (
        <div className="actions">
          <button type="button" autoFocus onClick={props.onClose} disabled={busy}>
            Cancel
          </button>
          <button
            type="button"
            className="danger"
            disabled={busy || total === 0}
            aria-busy={undo.busy}
            onClick={() => void undo.send()}
          >
            {undo.busy ? 'Undoing…' : 'Undo these changes'}
          </button>
        </div>
      ) : null}
      {done ? (
        <div className="actions">
          <button type="button" className="primary" autoFocus onClick={props.onClose}>
            Close
          </button>
        </div>
      ) : null}
      {key.lastUsedAt && !done ? (
        <p className="hint">
          Last used <Time value={key.lastUsedAt} />
          {key.state === 'active' ? '. If the key leaked, revoke it first, so it changes nothing more while you undo.' : '.'}
        </p>
      ) : null}
    </dialog>
  );
}

/** The records a revert left (or would leave) alone, with their collection and why. */
function Conflicts(props: { result: RevertResult; collectionName: (id: string) => string }): React.JSX.Element | null {
  const conflicts = props.result.conflicts;
  if (conflicts.length === 0) return null;
  return (
    <>
      <p>
        {conflicts.length >= LISTED_AT_MOST ? `At least ${LISTED_AT_MOST.toLocaleString()} records` : plural(conflicts.length, 'record', 'records')}{' '}
        {props.result.dryRun ? 'would be left alone' : 'left alone'}:
      </p>
      <DataTable<RevertResult['conflicts'][number]>
        caption="Records left alone"
        rows={conflicts.slice(0, SHOWN_CONFLICTS)}
        rowKey={(conflict) => `${conflict.collectionId}/${conflict.recordId}`}
        columns={[
          { id: 'record', label: 'Record', fixed: true, cell: (conflict) => <code>{conflict.recordId}</code>, title: (conflict) => conflict.recordId },
          {
            id: 'collection',
            label: 'Collection',
            cell: (conflict) => {
              const collection = props.collectionName(conflict.collectionId);
              return <Link to={`/collections/${encodeURIComponent(collection)}/records`}>{collection}</Link>;
            },
            title: (conflict) => props.collectionName(conflict.collectionId),
          },
          { id: 'why', label: 'Why', cell: reasonWords, title: reasonWords },
        ]}
      />
      {conflicts.length > SHOWN_CONFLICTS ? <p className="hint">And {conflicts.length - SHOWN_CONFLICTS} more.</p> : null}
    </>
  );
}
