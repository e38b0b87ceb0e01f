import { CopyButton } from './CopyButton.js';

/** A secret shown right after it is made: the service keeps only a hash, so this is the one chance. */
export function SecretOnce(props: { label: string; secret: string }): React.JSX.Element {
  return (
    <section className="secret-once" aria-label={props.label}>
      <h3>{props.label}</h3>
      <p className="warning" role="note">
        Copy it now and keep it somewhere safe: it is shown only this once and cannot be seen again.
      </p>
      <div className="copy-row">
        <code className="secret" aria-label={`${props.label} value`}>
          {props.secret}
        </code>
        <CopyButton text={props.secret} label={`Copy ${props.label.toLowerCase()}`} />
      </div>
    </section>
  );
}
