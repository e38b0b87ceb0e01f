import { useMutation } from '@tanstack/react-query';
import { type FormEvent, type ReactNode } from 'react';
import { ErrorText } from './ErrorText.js';
import { FormActions } from './FormActions.js';

/**
 * What a form does when it is sent. It returns the notice to show once everything it waits for
 * is done (nothing for no notice), or throws: what it throws is the form's one error, shown once
 * under the fields and read by each field for its own part (`fieldError(form.error, 'name')`).
 */
export type FormAction = () => Promise<string | undefined | void>;

export interface FormState {
  busy: boolean;
  error: unknown;
  notice: string;
  send: (event?: FormEvent) => Promise<void>;
  /** Runs another action with the same busy, error and notice: a table whose rows each change something. */
  run: (action: FormAction) => Promise<void>;
  /** Clears the error and the notice (a dialog opened again, an input changed). */
  clear: () => void;
}

/**
 * The state of one form: sending, its error and its notice, kept by a TanStack Query mutation
 * (sending starts afresh: no error, no notice). Pages that lay out their own buttons use it alone;
 * a table whose rows change things gives no action and `run`s each row's.
 */
export function useForm(action: FormAction = async () => undefined): FormState {
  const mutation = useMutation({ mutationFn: async (what: FormAction) => (await what()) || '' });
  async function run(what: FormAction) {
    if (mutation.isPending) return;
    // What it throws is kept as mutation.error and shown by the form: nothing more to do with it here.
    await mutation.mutateAsync(what).catch(() => undefined);
  }
  async function send(event?: FormEvent) {
    event?.preventDefault();
    await run(action);
  }
  return {
    busy: mutation.isPending,
    error: mutation.error,
    notice: mutation.data ?? '',
    send,
    run,
    clear: mutation.reset,
  };
}

/**
 * The dashboard's form: a titled panel, its fields, one error list, one notice and the same buttons
 * on every page. The fields are the children; `form` comes from `useForm` in the page, so fields
 * can show their own part of the error.
 */
export function Form(props: {
  form: FormState;
  /** The heading, which also names the form for screen readers. */
  title?: string;
  titleId?: string;
  /** A name for screen readers when the form has no heading of its own. */
  label?: string;
  submitLabel: string;
  busyLabel: string;
  disabled?: boolean;
  onCancel?: () => void;
  /** Said instead of the buttons when the reader may not change anything (a viewer's role). */
  readOnlyNote?: string;
  /** The fields already show the whole error next to themselves: it is not said again under the form. */
  errorInFields?: boolean;
  className?: string;
  children: ReactNode;
}): React.JSX.Element {
  const titleId = props.titleId ?? (props.title ? `${props.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-title` : undefined);
  return (
    <form
      className={props.className ?? 'panel stack'}
      onSubmit={(event) => void props.form.send(event)}
      aria-labelledby={props.title ? titleId : undefined}
      aria-label={props.title ? undefined : props.label}
      noValidate
    >
      {props.title ? <h2 id={titleId}>{props.title}</h2> : null}
      {props.children}
      {props.errorInFields ? null : <ErrorText error={props.form.error} />}
      {props.form.notice ? <p role="status">{props.form.notice}</p> : null}
      {props.readOnlyNote ? (
        <p className="hint">{props.readOnlyNote}</p>
      ) : (
        <FormActions label={props.submitLabel} busyLabel={props.busyLabel} busy={props.form.busy} disabled={props.disabled} onCancel={props.onCancel} />
      )}
    </form>
  );
}
