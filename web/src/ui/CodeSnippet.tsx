import { CopyButton } from './CopyButton.js';

/** Code to paste elsewhere: its name and a Copy button above it. */
export function CodeSnippet(props: { title: string; text: string }): React.JSX.Element {
  return (
    <figure className="snippet">
      <figcaption>
        {props.title} <CopyButton text={props.text} label={`Copy ${props.title}`} />
      </figcaption>
      {/* Focusable, so a keyboard can scroll a line wider than the window. */}
      <pre className="code" aria-label={props.title} tabIndex={0}>
        {props.text}
      </pre>
    </figure>
  );
}
