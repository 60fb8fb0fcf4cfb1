// The journal page: `journal check` (every record, the chain, history kept, quarantine) as its document says it.
import { get } from '../api';
import { badge, bytes, el, table } from '../dom';

interface CheckJournal {
  name: string;
  file: string;
  exists: boolean;
  records: number;
  bytes: number;
  problems: { line: number; reason: string }[];
  torn_tail: boolean;
  quarantined: number;
  replay_ms: number;
  history?: { records?: number; problems: { line?: number; reason: string }[]; files?: unknown[] };
}
interface Check {
  healthy: boolean;
  data_dir: string;
  journals: CheckJournal[];
  /** Records that hold a secret, by journal and kind (never the value): `crux journal redact` removes them. */
  secrets?: { journal: string; kind: string; records: number }[];
}

export async function journal(): Promise<HTMLElement> {
  const c = await get<Check>('journal/check');
  const problems = c.journals.flatMap((j) => j.problems.map((p) => [j.name, p.line, p.reason]));
  return el(
    'div',
    { class: 'page' },
    el('h2', {}, 'Journal ', c.healthy ? badge('healthy') : badge('damaged')),
    el('p', { class: 'muted' }, c.data_dir),
    table(
      ['journal', 'records', 'size', 'problems', 'torn tail', 'quarantined', 'history'],
      c.journals.map((j) => [
        j.name,
        j.records,
        bytes(j.bytes),
        j.problems.length,
        j.torn_tail ? 'yes' : 'no',
        j.quarantined,
        j.history === undefined ? '-' : `${j.history.records ?? '?'} records, ${j.history.problems.length} problems`,
      ]),
    ),
    el('h3', {}, 'Problems'),
    table(['journal', 'line', 'reason'], problems, 'none: every record verifies'),
    el('p', { class: 'muted' }, '`crux journal check --repair` moves bad lines into quarantine (the dashboard changes nothing).'),
    el('h3', {}, 'Secrets'),
    table(
      ['journal', 'kind', 'records'],
      (c.secrets ?? []).map((x) => [x.journal, x.kind, x.records]),
      'none: no record holds a secret',
    ),
    el('p', { class: 'muted' }, '`crux journal redact` removes them (the dashboard changes nothing).'),
  );
}
