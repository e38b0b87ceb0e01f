import { errorText } from '../api.js';

/** An error in words (the API's message and the fields it names), announced to screen readers. */
export function ErrorText(props: { error: unknown }): React.JSX.Element | null {
  if (props.error === null || props.error === undefined) return null;
  return (
    <p role="alert" className="error">
      {errorText(props.error)}
    </p>
  );
}
