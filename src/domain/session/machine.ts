// The session state machine, declared once as data: every command asks it, `crux session machine` prints it.

export const SESSION_STATES = ['active', 'archived', 'handed_off', 'closed'] as const;
export type SessionStatus = (typeof SESSION_STATES)[number];

export const SESSION_OPS = ['put', 'archive', 'unarchive', 'handoff', 'close'] as const;
export type SessionOp = (typeof SESSION_OPS)[number];

export const TERMINAL_STATE: SessionStatus = 'closed';
/** A session that does not exist yet can only be created, by `put` (or an import, or an accepted handoff). */
export const INITIAL_STATE: SessionStatus = 'active';

export interface Transition {
  readonly from: SessionStatus;
  readonly op: SessionOp;
  readonly to: SessionStatus;
}

export const TRANSITIONS: readonly Transition[] = [
  { from: 'active', op: 'put', to: 'active' },
  { from: 'active', op: 'archive', to: 'archived' },
  { from: 'active', op: 'handoff', to: 'handed_off' },
  { from: 'active', op: 'close', to: 'closed' },
  { from: 'archived', op: 'unarchive', to: 'active' },
  { from: 'archived', op: 'close', to: 'closed' },
  { from: 'handed_off', op: 'put', to: 'active' },
  { from: 'handed_off', op: 'archive', to: 'archived' },
  { from: 'handed_off', op: 'handoff', to: 'handed_off' },
  { from: 'handed_off', op: 'close', to: 'closed' },
];

/** Where `op` takes a session in `from`, or undefined when the move is illegal. */
export function nextStatus(from: SessionStatus, op: SessionOp): SessionStatus | undefined {
  return TRANSITIONS.find((t) => t.from === from && t.op === op)?.to;
}

/** The operations a session in `from` allows (for the exit-4 message). */
export function allowedOps(from: SessionStatus): SessionOp[] {
  return TRANSITIONS.filter((t) => t.from === from).map((t) => t.op);
}

export interface MachineView {
  readonly states: { name: SessionStatus; terminal: boolean }[];
  readonly transitions: Transition[];
  readonly initial: SessionStatus;
  readonly terminal: SessionStatus;
  readonly ops: readonly SessionOp[];
}

export function describeMachine(): MachineView {
  return {
    states: SESSION_STATES.map((name) => ({ name, terminal: name === TERMINAL_STATE })),
    transitions: [...TRANSITIONS],
    initial: INITIAL_STATE,
    terminal: TERMINAL_STATE,
    ops: SESSION_OPS,
  };
}
