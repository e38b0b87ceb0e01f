import { cloneElement, isValidElement, useId, type ReactElement } from 'react';

/** A labelled form control with its error under it; the label and error are tied to the input by id. */
export function Field(props: { label: string; error?: string; hint?: string; children: ReactElement<Record<string, unknown>> }): React.JSX.Element {
  const id = useId();
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const described = [props.hint ? hintId : null, props.error ? errorId : null].filter(Boolean).join(' ') || undefined;
  const control = isValidElement(props.children)
    ? cloneElement(props.children, { id, 'aria-describedby': described, 'aria-invalid': props.error ? true : undefined })
    : props.children;
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      {control}
      {props.hint ? (
        <small id={hintId} className="hint">
          {props.hint}
        </small>
      ) : null}
      {props.error ? (
        <small id={errorId} className="field-error">
          {props.error}
        </small>
      ) : null}
    </div>
  );
}
