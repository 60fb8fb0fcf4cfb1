// The human rendering of `crux doctor`: one screen, most important first.
import type { DoctorReport } from '../domain/doctor';
import { printable } from '../shared/printable';
import type { Style } from './style';
import type { CellValue } from './table';
import { wrapWords } from './text-width';

const SOURCE_TEXT: Record<string, string> = {
  flag: 'from --data-dir',
  env: 'from CRUX_DATA_DIR',
  xdg: 'from $XDG_DATA_HOME',
  default: 'the default, ~/.local/share/crux',
};

const STORE_SOURCE_TEXT: Record<string, string> = { flag: 'from --store', env: 'from CRUX_STORE' };

const from = (source: string, flag: string, env: string) => (source === 'flag' ? `from ${flag}` : source === 'env' ? `from ${env}` : 'not set');

export function renderDoctor(r: DoctorReport & { versions?: { crux: string; node: string } }, style: Style): string {
  const out: string[] = [];
  // On a terminal, prose wraps under its label: no line wider than the table above it.
  const row = (label: string, text: string) => out.push(...wrapWords(`${style.bold(label.padEnd(12))}${text}`, style.width, 12));
  const p = printable;

  if (r.versions !== undefined) row('version', `crux ${r.versions.crux}, Node ${r.versions.node}`);
  const dd = r.data_dir;
  const sv = r.server;
  if (sv === null) row('data dir', `${p(dd.path)}  (${dd.why ?? SOURCE_TEXT[dd.source]})  ${dd.exists ? `mode ${dd.mode}` : style.dim('not created yet')}`);
  else {
    row('store', `${p(dd.path)}  (${dd.why ?? STORE_SOURCE_TEXT[dd.source]})`);
    row(
      'server',
      `PostgreSQL ${p(sv.version)}, schema ${sv.schema} ${sv.schema_version === 0 ? style.dim('not created yet (the first write creates it)') : `at version ${sv.schema_version}`}`,
    );
    const tables = sv.tables.filter((t) => t.name.startsWith('journal_') || t.name === 'history');
    if (tables.length > 0) row('tables', tables.map((t) => `${t.name} ${style.size(t.bytes)}`).join(', '));
    if (sv.schema_version > 0) row('compacted', sv.last_compaction ?? 'never');
    const rep = sv.replication;
    if (rep !== undefined) {
      const standbys = rep.standbys.map((s) => `${p(s.name)} ${s.sync_state ?? 'hidden'}`).join(', ');
      row(
        'replication',
        `${rep.server} is the ${rep.role}; synchronous_commit ${p(rep.synchronous_commit)}, synchronous_standby_names ${rep.synchronous_standby_names === '' ? "''" : p(rep.synchronous_standby_names)}${rep.role === 'primary' ? `; standbys: ${standbys || 'none'}` : ''}: ${rep.replicated === false ? style.bad(rep.summary) : rep.summary}`,
      );
    }
  }
  const id = r.identity;
  row(
    'agent',
    id.agent === null
      ? `none (${from(id.agent_source, '--agent', 'CRUX_AGENT')}): session ids are stored as given, unscoped`
      : `${p(id.agent)} (${from(id.agent_source, '--agent', 'CRUX_AGENT')}): session ids are stored as ${p(id.session_key)}${id.agent_key ? `; Ed25519 key ${id.agent_key.key_id}` : ''}`,
  );
  row('actor', id.actor === null ? 'none: writes are recorded without an actor' : `${p(id.actor)} (${from(id.actor_source, '--actor', 'CRUX_ACTOR')})`);

  const k = r.handoff_key;
  // A key in a database is a row (no file mode: the database's grants guard it).
  const keyFile = !k.file.exists
    ? `${k.file.path} not created yet (the first mint creates it)`
    : k.file.mode === null
      ? `${k.file.path} (a row of the store)`
      : `${k.file.path} mode ${k.file.mode}${k.file.private ? '' : style.bad(' (readable by others)')}`;
  if (k.source === 'none') row('handoff key', `none yet: ${keyFile}`);
  else
    row(
      'handoff key',
      `${k.source === 'file' ? keyFile : k.source}, fingerprint ${k.fingerprint ?? style.bad('unusable')}${k.shadowed.length ? style.dim(` (overrides ${k.shadowed.join(', ')})`) : ''}`,
    );

  const enc = r.encryption;
  row(
    'encryption',
    enc.encrypted
      ? `at rest, key ${enc.key_id ?? style.bad('unreadable')}${enc.key_given === enc.key_id ? ' (given)' : style.dim(enc.key_given === null ? ' (no key given)' : ` (key given: ${enc.key_given})`)}`
      : 'none (a plain store)',
  );

  for (const k of r.keyring)
    row(
      k.status === 'trusted' ? 'trusted key' : 'revoked key',
      `${k.agent}: Ed25519 ${k.fingerprint}${k.status === 'revoked' ? style.dim(` (revoked ${k.revoked_at})`) : ''}`,
    );

  const lock = r.lock;
  const holder = lock.holder
    ? `pid ${lock.holder.pid} (${lock.holder.command.length > 60 ? `${lock.holder.command.slice(0, 59)}…` : lock.holder.command})`
    : 'another process';
  const how = style.dim(
    `(${[lock.mechanism, lock.filesystem ? `on ${lock.filesystem.type}${lock.filesystem.trusted ? '' : ', not trusted'}` : null].filter(Boolean).join(', ')})`,
  );
  row(
    'lock',
    lock.name === null
      ? style.dim('no data directory yet')
      : lock.held
        ? style.warn(`held now by ${holder}${lock.stale === null ? ' (alive or not: cannot be told here)' : ''}`)
        : lock.stale
          ? `free ${style.warn(`(recovered a stale lock left by ${holder}, killed)`)}`
          : `free ${how}`,
  );

  if (dd.exists) {
    out.push(
      ...style.table(
        [{ title: 'journal', flex: true }, 'bytes', 'records', 'last write', 'health', 'quarantined'],
        r.journals.map((j): CellValue[] => [
          j.file,
          j.exists ? style.size(j.bytes) : '-',
          j.exists ? String(j.records) : '-',
          style.when(j.last_write),
          !j.exists ? { text: 'absent', tone: 'dim' } : j.healthy ? { text: 'ok', tone: 'good' } : { text: `${j.problems.length} problem(s)`, tone: 'bad' },
          String(j.quarantined),
        ]),
      ),
    );
    const s = r.sessions;
    const statuses = Object.entries(s.by_status)
      .map(([status, n]) => `${n} ${status}`)
      .join(', ');
    row(
      'sessions',
      `${s.total}${statuses ? ` (${statuses})` : ''}; ${s.unscoped} unscoped, ${s.in_scope} in this agent's scope, ${s.other_agents} in other agents' scopes`,
    );
    if (s.stranded_count > 0) {
      row('stranded', `${s.stranded_count}`);
      for (const b of s.stranded.slice(0, 10))
        out.push(`  ${p(`${b.agent ? `${b.agent}/` : ''}${b.session_id}`)}  ${b.status}, last written ${b.updated_at ?? 'never'}`);
      if (s.stranded_count > 10) out.push(style.dim(`  … and ${s.stranded_count - 10} more (--json lists up to ${s.stranded.length})`));
    }
  }

  if (r.findings.length > 0) {
    out.push('');
    for (const f of r.findings) {
      const mark = f.level === 'fault' ? style.bad('✗') : f.level === 'warning' ? style.warn('!') : style.dim('·');
      out.push(...wrapWords(`${mark} ${p(f.message)}`, style.width, 2));
    }
  }
  out.push('');
  const warnings = r.findings.filter((f) => f.level === 'warning').length;
  out.push(
    !r.healthy
      ? style.bad('damaged')
      : warnings > 0
        ? style.warn(`healthy, ${warnings} warning(s)`)
        : style.good(dd.exists ? 'healthy' : 'healthy (nothing written yet)'),
  );
  return out.join('\n');
}
