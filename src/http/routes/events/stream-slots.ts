import type { Deps } from '../../../deps.js';
import { rateLimited } from '../../../errors.js';

/** Who holds an open stream: counted against the process, its workspace and itself (a key or person). */
export interface StreamHolder {
  workspaceId: string;
  caller: string;
}

export interface OpenCounts {
  total: number;
  perWorkspace: Map<string, number>;
  perCaller: Map<string, number>;
}

declare module '../../../services.js' {
  interface Services {
    /** How many event streams the app holds open: in all, per workspace, per caller. */
    streamSlots: OpenCounts;
  }
}

export const noStreamSlots = (): OpenCounts => ({ total: 0, perWorkspace: new Map(), perCaller: new Map() });

/**
 * Counts one more open stream, or refuses with 429 naming the cap it would pass: the process's,
 * the workspace's (so one workspace, however many keys it makes, cannot take the others' room)
 * or the caller's. Returns what gives the slot back (once, however often it is called).
 */
export function takeStreamSlot(deps: Deps, holder: StreamHolder): () => void {
  const open = deps.services.streamSlots;
  const { streamsPerProcess, streamsPerWorkspace, streamsPerCaller } = deps.config;
  const workspaceHolds = open.perWorkspace.get(holder.workspaceId) ?? 0;
  const callerHolds = open.perCaller.get(holder.caller) ?? 0;
  if (open.total >= streamsPerProcess) throw rateLimited(5, `This server holds ${streamsPerProcess} event streams, the most it may (the per-process cap); try again shortly.`);
  if (workspaceHolds >= streamsPerWorkspace) {
    throw rateLimited(5, `This workspace already holds ${streamsPerWorkspace} event streams open on this server, the most it may (the per-workspace cap); close one first.`);
  }
  if (callerHolds >= streamsPerCaller) {
    throw rateLimited(5, `This caller already holds ${streamsPerCaller} event streams open, the most it may (the per-caller cap); close one first.`);
  }
  open.total++;
  open.perWorkspace.set(holder.workspaceId, workspaceHolds + 1);
  open.perCaller.set(holder.caller, callerHolds + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    open.total--;
    giveBack(open.perWorkspace, holder.workspaceId);
    giveBack(open.perCaller, holder.caller);
  };
}

function giveBack(counts: Map<string, number>, who: string): void {
  const left = (counts.get(who) ?? 1) - 1;
  if (left > 0) counts.set(who, left);
  else counts.delete(who);
}
