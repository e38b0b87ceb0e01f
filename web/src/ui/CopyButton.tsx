import { useState } from 'react';

/** Copies text to the clipboard and says so; where the clipboard is refused, says to copy by hand. */
export function CopyButton(props: { text: string; label?: string }): React.JSX.Element {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setState('copied');
    } catch {
      setState('failed');
    }
  };
  return (
    <>
      <button type="button" onClick={() => void copy()}>
        {props.label ?? 'Copy'}
      </button>
      <span role="status" className="copy-status">
        {state === 'copied' ? 'Copied.' : state === 'failed' ? 'The browser refused the clipboard; select the text and copy it by hand.' : ''}
      </span>
    </>
  );
}
