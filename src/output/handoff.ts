// Human renderings of handoff results, and the inspect JSON (which splices the payload's raw members in).
import type { KeygenResult, TrustResult, UntrustResult } from '../domain/handoff/key-ring';
import type { HandoffRow } from '../domain/handoff/listing';
import type { AcceptResult, InspectResult, MintResult } from '../domain/handoff/store';
import type { KeyRow } from '../domain/handoff/ledger';
import { printable } from '../shared/printable';
import type { Style } from './style';
import { moreLine, NONE, type CellValue } from './table';

const route = (from: string, to: string | null) => printable(`${from} → ${to ?? 'any agent'}`);

export const renderMinted =
  (out: string | undefined) =>
  ({ minted }: MintResult): string =>
    `minted ${printable(minted.handoff_id)} for session ${printable(minted.session_id)} (${route(minted.source_agent, minted.target_agent)}, ${minted.signature_alg}, ${minted.facts} facts), expires ${minted.expires_at}` +
    (out === undefined ? '' : `; envelope written to ${out}`);

export const renderAccepted = ({ accepted, source_agent, handoff_id }: AcceptResult): string =>
  printable(
    `accepted session ${accepted.session_id} from ${source_agent} as ${accepted.agent} (${accepted.facts} facts)${handoff_id ? `, package ${handoff_id}` : ''}`,
  );

export const renderKeygen = ({ key, trusted }: KeygenResult): string =>
  [
    `${key.created ? 'created' : 'existing'} Ed25519 key of agent ${printable(key.agent)} (key id ${key.key_id}), ${trusted ? 'trusted in this data directory' : 'revoked in this data directory (`crux handoff trust` takes it back)'}`,
    `public key: ${key.public_key}`,
    `on the receiving side: crux handoff trust '${key.public_key}' --agent ${printable(key.agent)}`,
  ].join('\n');

export const renderTrusted = (r: TrustResult): string => `${r.added ? 'now trusting' : 'already trusted:'} key ${r.key_id} of agent ${printable(r.agent)}`;

export const renderUntrusted = (r: UntrustResult): string => {
  const agent = printable(r.agent);
  return [
    r.revoked.length === 0
      ? `already revoked: no key of agent ${agent} changed`
      : `revoked ${r.revoked.map((k) => k.key_id).join(', ')} of agent ${agent}: packages signed with ${r.revoked.length === 1 ? 'it' : 'them'} are refused`,
    r.trusted.length === 0 ? `agent ${agent} has no trusted Ed25519 key left here` : `still trusted: ${r.trusted.map((k) => k.key_id).join(', ')}`,
  ].join('\n');
};

const STATUS_TONE = { accepted: 'good', expired: 'warn' } as const;

/** The handoffs, newest first unless --sort said otherwise (a last line on a terminal when cut short), then the keyring. */
export function* renderList(
  { handoffs, keys, total }: { handoffs: readonly HandoffRow[]; keys: readonly KeyRow[]; total?: number },
  style: Style,
): Generator<string> {
  const columns = [
    { title: 'id', id: true },
    { title: 'session', id: true },
    { title: 'from → to', name: 'route', flex: true },
    'status',
    { title: 'created', optional: true },
    'expires',
    { title: 'accepted by', flex: true, optional: true },
  ];
  if (handoffs.length === 0) yield 'no handoffs';
  else {
    yield* style.table(
      columns,
      handoffs.map((r): CellValue[] => [
        r.handoff_id ?? { text: `#${r.content_hash.slice(0, 12)}`, tone: 'dim' },
        r.session_id,
        route(r.source_agent, r.target_agent),
        { text: r.status, tone: STATUS_TONE[r.status as keyof typeof STATUS_TONE] },
        style.when(r.created_at),
        style.when(r.expires_at),
        r.accepted_by ?? NONE,
      ]),
    );
    const more = style.terminal ? moreLine(handoffs.length, total, 'handoff') : undefined;
    if (more !== undefined) yield style.dim(more);
  }
  if (keys.length === 0) return;
  yield '';
  yield* style.table(
    [
      { title: 'agent', flex: true },
      { title: 'Ed25519 key fingerprint', name: 'fingerprint', id: true },
      'status',
      { title: 'public key', name: 'public_key', flex: true, optional: true },
    ],
    keys.map((k): CellValue[] => [
      k.agent,
      k.fingerprint,
      k.status === 'revoked' ? { text: `revoked ${style.when(k.revoked_at)}`, tone: 'bad' } : { text: 'trusted', tone: 'good' },
      k.public_key,
    ]),
  );
}

/** What --quiet prints of the list: each package's id (a package accepted here without one: its content hash). */
export const handoffIds = ({ handoffs }: { handoffs: readonly HandoffRow[] }): string[] => handoffs.map((r) => r.handoff_id ?? r.content_hash);

export function renderInspect(r: InspectResult, style: Style): string {
  const lines: string[] = [];
  lines.push(style.bold('package'));
  if (r.package === null) lines.push('  (the payload does not decode as a JSON object)');
  else
    for (const { key, raw } of r.package)
      lines.push(`  ${printable(key)}: ${printable(raw.length > 400 ? `${raw.slice(0, 400)}… (${raw.length} characters)` : raw)}`);
  lines.push(style.bold('envelope'));
  lines.push(`  content_hash: ${r.envelope.content_hash}`, `  signature_alg: ${r.envelope.signature_alg}`, `  payload: ${r.envelope.payload_bytes} bytes`);
  lines.push(style.bold('checks'));
  // The domain lists the checks in SPEC order (CHECK_NAMES).
  for (const [name, status] of Object.entries(r.checks) as [keyof InspectResult['checks'], string][]) {
    const mark = status === 'ok' ? style.good('ok     ') : status === 'failed' ? style.bad('FAILED ') : style.warn('skipped');
    lines.push(`  ${mark} ${name.padEnd(17)} ${printable(r.details[name])}`);
  }
  return lines.join('\n');
}

/** `{"package": P, "checks": {...}, …}` with P's members spliced in as received: numbers and key order intact. */
export function inspectJson(r: InspectResult): string {
  const pkg = r.package === null ? 'null' : `{${r.package.map(({ key, raw }) => `${JSON.stringify(key)}:${raw}`).join(',')}}`;
  const rest = JSON.stringify({ checks: r.checks, details: r.details, envelope: r.envelope, expires_at: r.expires_at });
  return `{"package":${pkg},${rest.slice(1)}`;
}
