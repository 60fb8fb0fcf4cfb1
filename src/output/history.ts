// The human rendering of `crux session history`: one row per recorded version, newest first.
import type { HistoryEntry } from '../domain/session/history';
import type { CellValue } from './table';
import type { Style } from './style';

export function* renderHistory({ history }: { history: readonly HistoryEntry[] }, style: Style): Generator<string> {
  if (history.length === 0) {
    yield 'no versions';
    return;
  }
  yield* style.table(
    ['seq', 'time', 'event', { title: 'actor', optional: true }, 'status', 'state bytes'],
    history.map((h): CellValue[] => [
      String(h.seq),
      style.when(h.ts),
      h.ev,
      h.actor ?? '',
      h.status ?? { text: 'deleted', tone: 'dim' },
      h.state_bytes === null ? '' : String(h.state_bytes),
    ]),
  );
}
