// The session state machine, declared once as data: every command asks it, `crux session machine` prints it.
//
// Refinements over SPEC §4's starting table, and why:
// - `receive` (an accepted handoff landing under the receiver's scope) is an op of its own: it creates a
//   session that does not exist, replaces an active or handed-off one, and is refused on an archived one
//   (archive keeps a state in full until someone unarchives it; an accept must not overwrite it silently)
//   and on a closed one (closed is final).
// - Creation is declared beside the transitions (`CREATING_OPS`): `put`, `import` and `receive` are the
//   only ways a session comes to exist; every other op on a missing session is "not found" (exit 3).
// - `close` on a closed session is not a transition but the one declared idempotent no-op (exit 0,
//   `already_closed` with the original record): the terminal state has no way out.
// - `delete` is not a lifecycle move: it removes the record from any state (`REMOVING_OPS`), irreversibly.
// - `reap` is `close` with the outcome `expired`, chosen by the clock rather than by a caller.
// - `touch` (a lifecycle hook's sign of life: Claude Code's Stop, UserPromptSubmit, …) moves updated_at only,
//   keeping the status; on a closed session it is a declared no-op, as a second close is: a hook firing
//   after the reaper must not fail the agent.

export const SESSION_STATES = ['active', 'archived', 'handed_off', 'closed'] as const;
export type SessionStatus = (typeof SESSION_STATES)[number];

export const SESSION_OPS = ['put', 'archive', 'unarchive', 'handoff', 'receive', 'close', 'touch'] as const;
export type SessionOp = (typeof SESSION_OPS)[number];

export const TERMINAL_STATE: SessionStatus = 'closed';
/** Whether nothing moves a session in `status` any more (only delete removes it). */
export const isTerminal = (status: SessionStatus): boolean => status === TERMINAL_STATE;
/** The state a new session starts in. */
export const INITIAL_STATE: SessionStatus = 'active';
/** The operations that create a session which does not exist yet (all land in INITIAL_STATE). */
export const CREATING_OPS = ['put', 'import', 'receive'] as const;
/** The operations that remove a session whatever its state. */
export const REMOVING_OPS = ['delete'] as const;
/** (state, op) pairs that are accepted and change nothing. */
const IDEMPOTENT: readonly { readonly state: SessionStatus; readonly op: SessionOp }[] = [
  { state: 'closed', op: 'close' },
  { state: 'closed', op: 'touch' },
];

export interface Transition {
  readonly from: SessionStatus;
  readonly op: SessionOp;
  readonly to: SessionStatus;
}

export const TRANSITIONS: readonly Transition[] = [
  { from: 'active', op: 'put', to: 'active' },
  { from: 'active', op: 'archive', to: 'archived' },
  { from: 'active', op: 'handoff', to: 'handed_off' },
  { from: 'active', op: 'receive', to: 'active' },
  { from: 'active', op: 'close', to: 'closed' },
  { from: 'archived', op: 'unarchive', to: 'active' },
  { from: 'archived', op: 'close', to: 'closed' },
  { from: 'handed_off', op: 'put', to: 'active' },
  { from: 'handed_off', op: 'archive', to: 'archived' },
  { from: 'handed_off', op: 'handoff', to: 'handed_off' },
  { from: 'handed_off', op: 'receive', to: 'active' },
  { from: 'handed_off', op: 'close', to: 'closed' },
  { from: 'active', op: 'touch', to: 'active' },
  { from: 'archived', op: 'touch', to: 'archived' },
  { from: 'handed_off', op: 'touch', to: 'handed_off' },
];

/** Where `op` takes a session in `from`, or undefined when the move is illegal. */
export function nextStatus(from: SessionStatus, op: SessionOp): SessionStatus | undefined {
  return TRANSITIONS.find((t) => t.from === from && t.op === op)?.to;
}

/** The operations a session in `from` allows (for the exit-4 message). */
export function allowedOps(from: SessionStatus): SessionOp[] {
  return TRANSITIONS.filter((t) => t.from === from).map((t) => t.op);
}

export const isIdempotent = (state: SessionStatus, op: SessionOp): boolean => IDEMPOTENT.some((i) => i.state === state && i.op === op);

export interface MachineView {
  readonly states: { name: SessionStatus; terminal: boolean }[];
  readonly transitions: Transition[];
  readonly initial: SessionStatus;
  readonly terminal: SessionStatus;
  readonly ops: readonly SessionOp[];
  readonly creating: readonly string[];
  readonly removing: readonly string[];
  readonly idempotent: readonly { state: SessionStatus; op: SessionOp }[];
}

export function describeMachine(): MachineView {
  return {
    states: SESSION_STATES.map((name) => ({ name, terminal: name === TERMINAL_STATE })),
    transitions: [...TRANSITIONS],
    initial: INITIAL_STATE,
    terminal: TERMINAL_STATE,
    ops: SESSION_OPS,
    creating: CREATING_OPS,
    removing: REMOVING_OPS,
    idempotent: IDEMPOTENT,
  };
}
