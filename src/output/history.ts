// The human rendering of `crux session history`: one row per recorded version, newest first.
import type { HistoryEntry } from '../domain/session/history';
import { moreLine, NONE, type CellValue } from './table';
import type { Style } from './style';

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
