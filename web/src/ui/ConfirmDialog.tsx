import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { ErrorText } from './ErrorText.js';

/**
 * Asks before anything destructive. A modal <dialog>: focus moves into it and stays there, Escape
 * cancels. When onConfirm returns a promise the dialog stays open, busy, until it settles, and
 * shows the error in words if it fails.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  message: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => void | Promise<void>;
  onCancel: () => void;
}): React.JSX.Element {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const messageId = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (props.open && !element.open) {
      setError(null);
      element.showModal();
    } else if (!props.open && element.open) element.close();
  }, [props.open]);

  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await props.onConfirm();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog
      ref={dialog}
      className="dialog"
      aria-labelledby={titleId}
      aria-describedby={messageId}
      onCancel={(event) => {
        event.preventDefault();
        if (!busy) props.onCancel();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      <div id={messageId} className="dialog-message">
        {props.message}
      </div>
      <ErrorText error={error} />
      <div className="actions">
        {/* Cancel first and focused: the safe choice is the default one. */}
        <button type="button" autoFocus onClick={props.onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="button" className={props.danger ? 'danger' : 'primary'} onClick={() => void confirm()} disabled={busy} aria-busy={busy}>
          {busy ? 'Working…' : props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
