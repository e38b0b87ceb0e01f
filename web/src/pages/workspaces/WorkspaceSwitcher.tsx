import { useId } from 'react';
import { navigate } from '../../router.js';
import { useAuth } from '../../session.js';

/** Picks the workspace every page works in; switching goes to its collections. */
export function WorkspaceSwitcher(): React.JSX.Element | null {
  const { state } = useAuth();
  const id = useId();
  if (state.status !== 'signed-in' || !state.workspace) return null;
  return (
    <div className="switcher">
      <label htmlFor={id}>Workspace</label>
      <select
        id={id}
        value={state.workspace.id}
        onChange={(event) => {
          state.switchWorkspace(event.target.value);
          navigate('/');
        }}
      >
        {state.workspaces.map((workspace) => (
          <option key={workspace.id} value={workspace.id}>
            {workspace.name} ({workspace.role})
          </option>
        ))}
      </select>
    </div>
  );
}
