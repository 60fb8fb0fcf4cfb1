// Human renderings of `journal check` and `journal compact`.
import type { CompactReport, JournalReport } from '../journal/store-boundary';
import type { Style } from './style';

export function renderCheck(result: { healthy: boolean; data_dir: string; journals: JournalReport[] }, style: Style): string {
  const rows = result.journals.map((j) => [
    j.file,
    j.exists ? String(j.records) : '-',
    j.exists ? String(j.bytes) : '-',
    j.problems.length === 0 ? style.good('ok') : j.repaired ? style.warn(`repaired (${j.problems.length})`) : style.bad(String(j.problems.length)),
    String(j.quarantined),
    `${j.replay_ms} ms`,
  ]);
  const lines = [style.table(['journal', 'records', 'bytes', 'problems', 'quarantined', 'replay'], rows)];
  for (const j of result.journals) {
    for (const p of j.problems) lines.push(`${j.file}:${p.line}: ${p.reason}`);
    if (j.repaired) lines.push(`${j.file}: removed ${j.repaired.removed} line(s); kept in ${j.repaired.quarantine.join(', ')}`);
  }
  lines.push(result.healthy ? style.good(`healthy: ${result.data_dir}`) : style.bad(`damaged: ${result.data_dir}`));
  return lines.join('\n');
}

export function renderCompact(result: { journals: CompactReport[] }, style: Style): string {
  return style.table(
    ['journal', 'records before', 'bytes before', 'records after', 'bytes after'],
    result.journals.map((j) => [j.file, String(j.before.records), String(j.before.bytes), String(j.after.records), String(j.after.bytes)]),
  );
}
