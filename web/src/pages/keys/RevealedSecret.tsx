import { useEffect, useRef } from 'react';
import { SecretOnce } from '../../ui/SecretOnce.js';

/**
 * The panel that holds a freshly made secret (a key's or a webhook's). It takes the focus when it
 * appears, so a keyboard or screen-reader user lands on the one thing they must do now.
 */
export function RevealedSecret(props: { title: string; label: string; secret: string; usage?: React.ReactNode; onDone: () => void }): React.JSX.Element {
  const panel = useRef<HTMLElement>(null);
  useEffect(() => panel.current?.focus(), [props.secret]);
  return (
    <section className="panel revealed" ref={panel} tabIndex={-1} aria-label={props.title}>
      <h2>{props.title}</h2>
      <SecretOnce label={props.label} secret={props.secret} />
      {props.usage}
      <div className="actions">
        <button type="button" className="primary" onClick={props.onDone}>
          I have copied it
        </button>
      </div>
    </section>
  );
}
