// The human rendering of `crux doctor` for a PostgreSQL store it cannot use: what it could still check, in order.
import type { ProbeCheck } from '../journal/pg/probe';
import { printable } from '../shared/printable';
import type { Style } from './style';
import { wrapWords } from './text-width';

export interface UnreachableReport {
  readonly versions: { readonly crux: string; readonly node: string };
  readonly healthy: false;
  /** A server of the URL took the connection (the login, if anything, failed). */
  readonly reachable: boolean;
  readonly checked_at: string;
  /** The store as messages name it (never the password), and why it was chosen. */
  readonly store: { readonly url: string; readonly why: string | null; readonly user: string; readonly database: string; readonly schema: string };
  readonly checks: readonly ProbeCheck[];
}

export function renderUnreachable(r: UnreachableReport, style: Style): string {
  const out: string[] = [];
  const row = (label: string, text: string) => out.push(...wrapWords(`${style.bold(label.padEnd(12))}${text}`, style.width, 12));
  row('version', `crux ${r.versions.crux}, Node ${r.versions.node}`);
  row('store', `${printable(r.store.url)}${r.store.why ? `  (${r.store.why})` : ''}`);
  for (const c of r.checks) {
    const status = c.status === 'ok' ? style.good('ok') : c.status === 'failed' ? style.bad('failed') : style.dim('skipped');
    row(c.check, `${status}  ${printable(c.detail)}`);
  }
  // The server answered but would not let crux in (a login refused), or crux could not reach it at all.
  const failed = r.checks.find((c) => c.status === 'failed');
  const word = r.reachable ? 'refused' : 'unreachable';
  out.push('', style.bad(`${word}: ${failed ? `${failed.check}: ${printable(failed.detail)}` : 'the store could not be used'}`));
  return `${out.join('\n')}\n`;
}
