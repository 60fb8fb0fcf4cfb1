// Human renderings of `journal check`, `journal compact`, `journal copy` and `journal redact`.
import type { CompactReport, JournalReport } from '../journal/core/store-boundary';
import { printable } from '../shared/printable';
import type { CopyReport } from '../journal/core/copy';
import type { SecretCount } from '../journal/core/secret-survey';
import type { RedactedCount } from '../journal/core/redact-store';
import type { Style } from './style';
import type { CellValue } from './table';

export function renderCheck(result: { healthy: boolean; data_dir: string; journals: JournalReport[]; secrets?: SecretCount[] }, style: Style): string {
  const rows = result.journals.map((j): CellValue[] => [
    j.file,
    j.exists ? String(j.records) : '-',
    j.exists ? style.size(j.bytes) : '-',
    j.problems.length === 0
      ? { text: 'ok', tone: 'good' }
      : j.repaired
        ? { text: `repaired (${j.problems.length})`, tone: 'warn' }
        : { text: String(j.problems.length), tone: 'bad' },
    String(j.quarantined),
    `${j.replay_ms} ms`,
  ]);
  const lines = [...style.table([{ title: 'journal', flex: true }, 'records', 'bytes', 'problems', 'quarantined', 'replay'], rows)];
  for (const j of result.journals) {
    for (const p of j.problems) lines.push(`${j.file}:${p.line}: ${printable(p.reason)}`);
    if (j.repaired) lines.push(`${j.file}: removed ${j.repaired.removed} line(s); kept in ${j.repaired.quarantine.join(', ')}`);
    for (const p of j.derived?.problems ?? [])
      lines.push(`${j.file}: ${printable(p)}: ${j.derived!.rebuilt ? 'rebuilt' : 'derived rows (`crux journal check --repair` rebuilds them)'}`);
    const h = j.history;
    if (h === undefined) continue;
    lines.push(
      `${j.file}: history ${h.files} file(s), ${h.records} records, ${h.bytes} bytes, ${h.problems.length === 0 ? style.good('ok') : style.bad(`${h.problems.length} problem(s)`)}`,
    );
    for (const p of h.problems) lines.push(`${p.file}:${p.line}: ${p.reason}`);
    if (h.quarantined?.length) lines.push(`${j.file}: damaged history moved to ${h.quarantined.join(', ')}`);
  }
  for (const s of result.secrets ?? []) {
    lines.push(style.warn(`${s.journal}: ${s.records} record(s) hold a secret (${s.kind})`));
  }
  lines.push(result.healthy ? style.good(`healthy: ${printable(result.data_dir)}`) : style.bad(`damaged: ${printable(result.data_dir)}`));
  return lines.join('\n');
}

export function renderCompact(result: { journals: CompactReport[] }, style: Style): Iterable<string> {
  return style.table(
    [{ title: 'journal', flex: true }, 'records before', 'bytes before', 'records after', 'bytes after'],
    result.journals.map((j) => [j.file, String(j.before.records), style.size(j.before.bytes), String(j.after.records), style.size(j.after.bytes)]),
  );
}

export function renderCopy(result: { copied: CopyReport }, style: Style): string {
  const c = result.copied;
  // Records, not sessions: 17 records may be 15 sessions (a put and a close are two).
  const journals = c.journals.map((j) => `${j.name} ${j.records} record${j.records === 1 ? '' : 's'}`).join(', ');
  return [`copied ${c.from} → ${c.to}: ${journals}; ${c.keys.length} key item(s)`, style.good('journal check on the copy: healthy')].join('\n');
}

export function renderRedact(
  result: { dry_run: boolean; states: boolean; redacted: RedactedCount[]; quarantine: { items: number; redacted: number }; note: string },
  style: Style,
): string {
  const done = result.dry_run ? 'would be redacted' : 'redacted';
  const lines = result.redacted.map((r) => `${r.journal}: ${r.records} record(s) with a secret (${r.kind}) ${done}`);
  if (result.quarantine.redacted > 0) lines.push(`quarantine: ${result.quarantine.redacted} of ${result.quarantine.items} item(s) ${done}`);
  if (lines.length === 0) lines.push(style.good('no secret found: nothing to redact'));
  if (!result.states) lines.push('session states were left as they are (--states redacts them too)');
  lines.push(result.dry_run ? style.warn('dry run: nothing was written') : `note: ${result.note}`);
  return lines.join('\n');
}
