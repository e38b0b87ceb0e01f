/**
 * A form's buttons, the same on every page: Cancel (when the form can be closed) and then the
 * submit button, both disabled while the form is being sent, the submit button saying so.
 */
export function FormActions(props: { label: string; busyLabel: string; busy: boolean; disabled?: boolean; onCancel?: () => void }): React.JSX.Element {
  return (
    <div className="actions">
      {props.onCancel ? (
        <button type="button" onClick={props.onCancel} disabled={props.busy}>
          Cancel
        </button>
      ) : null}
      <button type="submit" className="primary" disabled={props.busy || props.disabled} aria-busy={props.busy}>
        {props.busy ? props.busyLabel : props.label}
      </button>
    </div>
  );
}
