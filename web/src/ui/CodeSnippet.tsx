import { CopyButton } from './CopyButton.js';

/** Code to paste elsewhere: its name and a Copy button above it. */
export function CodeSnippet(props: { title: string; text: string }): React.JSX.Element {
  return (
    <figure className="snippet">
      <figcaption>
        {props.title} <CopyButton text={props.text} label={`Copy ${props.title}`} />
      </figcaption>
      <pre className="code" aria-label={props.title}>
        {props.text}
      </pre>
    </figure>
  );
}
