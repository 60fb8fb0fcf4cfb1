// Human renderings of session results: a table for listings, history and the machine, short sentences elsewhere.
import type { SessionImportSummary } from '../domain/session/decide';
import type { HistoryEntry } from '../domain/session/history';
import type { MachineView } from '../domain/session/machine';
import type { Listing } from '../domain/session/query';
import type { CloseResult, ReapResult } from '../domain/session/store';
import type { SessionView } from '../domain/session/view';
import { printable } from '../shared/printable';
import type { Style } from './style';
import { moreLine, NONE, type CellValue, type Column } from './table';
import { wrapWords } from './text-width';

const who = (s: { session_id: string; agent: string | null }) => printable(`${s.session_id}${s.agent ? ` (agent ${s.agent})` : ''}`);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export const renderSession =
  (verb: string) =>
  ({ session }: { session: SessionView }): string =>
    `${verb} session ${who(session)}: ${session.status}, ${session.total_tokens} tokens${session.expires_at ? `, expires ${session.expires_at}` : ''}`;

export function renderClose({ outcome, session }: CloseResult): string {
  const how = printable(`${session.outcome}${session.summary ? `: ${session.summary}` : ''}`);
  return outcome === 'closed'
    ? `closed session ${who(session)} (${how})`
    : `session ${who(session)} was already closed at ${session.closed_at} (${how}); nothing changed`;
}

export function renderReap(result: ReapResult): string {
  if (result.count === 0) return 'nothing to reap';
  const verb = result.dry_run ? 'would reap' : 'reaped';
  return `${verb} ${plural(result.count, 'expired session')}: ${result.sessions.map(who).join(', ')}`;
}

export const renderDeleted = ({ deleted, agent }: { deleted: string; agent: string | null }): string =>
  `deleted session ${who({ session_id: deleted, agent })} (irreversibly)`;

export const renderImported = (s: SessionImportSummary): string =>
  `imported ${plural(s.imported, 'session')} (${s.created} new, ${s.replaced} replaced${s.unchanged > 0 ? `, ${s.unchanged} unchanged` : ''})`;

const FRESHNESS_TONE = { fresh: 'good', aging: 'warn', stale: 'bad', invalid: 'bad', unknown: 'dim' } as const;

/**
 * The sessions as a table: ids whole, the optional columns (rightmost first) left out when the terminal is too
 * narrow, an outcome for closed sessions; on a terminal, a last line when the list was cut short.
 */
export function* renderListing(listing: Listing & { all_agents: boolean; total?: number }, style: Style): Generator<string> {
  if (listing.sessions.length === 0) yield 'no sessions';
  else {
    const head: Column[] = [
      { title: 'id', id: true },
      { title: 'status' },
      { title: 'outcome' },
      { title: 'updated' },
      { title: 'freshness', optional: true },
      { title: 'tokens', optional: true },
      { title: 'expires', optional: true },
      { title: 'actor', flex: true, optional: true },
    ];
    if (listing.all_agents) head.splice(1, 0, { title: 'agent', flex: true });
    const rows = function* (): Generator<CellValue[]> {
      for (const s of listing.sessions) {
        const row: CellValue[] = [
          s.session_id,
          s.status,
          s.outcome ?? NONE,
          style.when(s.updated_at),
          s.freshness === null ? NONE : { text: s.freshness, tone: FRESHNESS_TONE[s.freshness] },
          String(s.total_tokens),
          style.when(s.expires_at),
          s.actor ?? NONE,
        ];
        if (listing.all_agents) row.splice(1, 0, s.agent ?? NONE);
        yield row;
      }
    };
    yield* style.table(head, rows());
  }
  const more = style.terminal ? moreLine(listing.sessions.length, listing.total, 'session') : undefined;
  if (more !== undefined) yield style.dim(more);
  if (listing.hidden_scoped > 0) yield style.dim(`${plural(listing.hidden_scoped, 'scoped session')} hidden (use --all-agents)`);
}

/** What --quiet prints of a listing: the ids, one a line. */
export const listingIds = (listing: Listing): string[] => listing.sessions.map((s) => s.session_id);

export function renderMachine(machine: MachineView, style: Style): string {
  const ops = machine.ops;
  const rows = machine.states.map(({ name, terminal }): CellValue[] => [
    terminal ? `${name} (terminal)` : name,
    ...ops.map((op) => {
      const t = machine.transitions.find((x) => x.from === name && x.op === op);
      if (t) return `→ ${t.to}`;
      return machine.idempotent.some((i) => i.state === name && i.op === op) ? 'no-op (0)' : { text: 'refused (4)', tone: 'dim' as const };
    }),
  ]);
  return [
    ...style.table([{ title: 'from \\ op', name: 'from' }, ...ops], rows),
    // Sentences, not rows: broken at spaces to the width of the terminal (or COLUMNS), never cut.
    ...wrapWords(
      `a new session starts ${machine.initial}, created by: ${machine.creating.join(', ')} (any other op on a missing session: not found, 3)`,
      style.width,
      2,
    ),
    ...wrapWords(`removed from any state by: ${machine.removing.join(', ')}; reap is close with the outcome expired`, style.width, 2),
  ].join('\n');
}

/** `crux session history`: one row per recorded version, newest first. */
export function* renderHistory({ history, total }: { history: readonly HistoryEntry[]; total?: number }, style: Style): Generator<string> {
  if (history.length === 0) {
    yield 'no versions';
    return;
  }
  yield* style.table(
    ['seq', 'time', 'event', { title: 'actor', flex: true, optional: true }, 'status', { title: 'state bytes', optional: true }],
    history.map((h): CellValue[] => [
      String(h.seq),
      style.when(h.ts),
      h.ev,
      h.actor ?? NONE,
      h.status ?? { text: 'deleted', tone: 'dim' },
      h.state_bytes === null ? NONE : String(h.state_bytes),
    ]),
  );
  const more = style.terminal ? moreLine(history.length, total, 'version') : undefined;
  if (more !== undefined) yield style.dim(more);
}
