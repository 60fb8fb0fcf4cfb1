// What part of a list to show, and in which order: `--sort <key>` (`-key` for descending, as git's
// --sort), cheap filters and `--limit <n>`, the same for every list and every adapter.
import type { Case } from './case/case';
import type { HandoffRow } from './handoff/listing';
import type { SessionView } from './session/view';

export interface SortSpec<K extends string> {
  readonly key: K;
  readonly descending: boolean;
}

export interface ListWindow<T, K extends string> {
  readonly sort?: SortSpec<K> | undefined;
  readonly where?: ((row: T) => boolean) | undefined;
  readonly limit?: number | undefined;
}

type Compare<T> = (a: T, b: T) => number;
export type Orders<T, K extends string> = Readonly<Record<K, Compare<T>>>;

const text = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1);
const num = (a: number, b: number) => a - b;

/**
 * The rows a window shows — filtered, sorted (stably: ties keep the list's own order), then cut to the limit —
 * and how many rows matched before the limit (a list cut short says how many more there are).
 */
export function windowOf<T, K extends string>(rows: readonly T[], orders: Orders<T, K>, window: ListWindow<T, K>): { rows: T[]; total: number } {
  let out = window.where === undefined ? [...rows] : rows.filter(window.where);
  if (window.sort !== undefined) {
    const compare = orders[window.sort.key];
    out = window.sort.descending ? out.sort((a, b) => compare(b, a)) : out.sort(compare);
  }
  return { rows: window.limit === undefined ? out : out.slice(0, window.limit), total: out.length };
}

export type SessionOrder = 'updated' | 'id' | 'agent' | 'status' | 'tokens' | 'expires' | 'created';

export const SESSION_ORDERS: Orders<SessionView, SessionOrder> = {
  updated: (a, b) => text(a.updated_at, b.updated_at),
  created: (a, b) => text(a.created_at, b.created_at),
  id: (a, b) => text(a.session_id, b.session_id),
  agent: (a, b) => text(a.agent, b.agent),
  status: (a, b) => text(a.status, b.status),
  tokens: (a, b) => num(a.total_tokens, b.total_tokens),
  expires: (a, b) => text(a.expires_at, b.expires_at),
};

export const CASE_ORDERS: Orders<Case, 'created' | 'id' | 'task' | 'reward' | 'reused'> = {
  created: (a, b) => text(a.created_at, b.created_at),
  id: (a, b) => text(a.case_id, b.case_id),
  task: (a, b) => text(a.task, b.task),
  reward: (a, b) => num(a.reward, b.reward),
  reused: (a, b) => num(a.times_reused, b.times_reused),
};

export const HANDOFF_ORDERS: Orders<HandoffRow, 'created' | 'expires' | 'status' | 'session' | 'from' | 'to'> = {
  created: (a, b) => text(a.created_at, b.created_at),
  expires: (a, b) => text(a.expires_at, b.expires_at),
  status: (a, b) => text(a.status, b.status),
  session: (a, b) => text(a.session_id, b.session_id),
  from: (a, b) => text(a.source_agent, b.source_agent),
  to: (a, b) => text(a.target_agent, b.target_agent),
};
