// The handoffs of a store as rows (minted and accepted packages with their status) and a minted package's envelope.
import { openSealed, shownSealed } from '../../journal/codec/cipher';
import { invalid, notFound } from '../../shared/errors';
import type { Instant } from '../../shared/time';
import type { Envelope } from './envelope';
import { HANDOFF_STORE, handoffPlace, keyRows, type AcceptedEntry, type KeyRow, type Ledger, type MintedData, type MintedEntry } from './ledger';
import type { HandoffScope } from './store';

export type HandoffStatus = 'outstanding' | 'accepted' | 'expired';

export interface HandoffRow {
  readonly direction: 'minted' | 'accepted';
  readonly handoff_id: string | null;
  readonly session_id: string;
  readonly source_agent: string;
  readonly target_agent: string | null;
  /** The agent that accepted it here, if any. */
  readonly accepted_by: string | null;
  readonly status: HandoffStatus;
  readonly created_at: string;
  readonly expires_at: string;
  readonly accepted_at: string | null;
  readonly content_hash: string;
  readonly signature_alg: string;
  readonly facts: number;
  readonly message: string | null;
}

/** Minted and accepted packages, oldest first (a package minted and accepted here is one row); and the keyring. */
export async function listHandoffs(scope: HandoffScope): Promise<{ handoffs: HandoffRow[]; keys: KeyRow[] }> {
  const ledger = await scope.dir.read(HANDOFF_STORE);
  return { handoffs: handoffRows(ledger, scope.now), keys: keyRows(ledger) };
}

/** One row, its members in one order whichever way the package came (--json prints them in it). */
function row(direction: HandoffRow['direction'], d: MintedEntry | AcceptedEntry, accepted: AcceptedEntry | undefined, status: HandoffStatus): HandoffRow {
  return {
    direction,
    handoff_id: d.handoff_id,
    session_id: d.session_id,
    source_agent: d.source_agent,
    target_agent: d.target_agent,
    accepted_by: accepted?.agent ?? null,
    status,
    created_at: d.created_at,
    expires_at: d.expires_at,
    accepted_at: accepted?.accepted_at ?? null,
    content_hash: d.content_hash,
    signature_alg: d.signature_alg,
    facts: d.facts,
    message: shownSealed(d.message, handoffPlace(d, 'message')),
  };
}

function handoffRows(ledger: Ledger, now: Instant): HandoffRow[] {
  const rows: HandoffRow[] = [];
  for (const m of ledger.minted.values()) {
    const a = ledger.accepted.get(m.content_hash);
    rows.push(row('minted', m, a, a !== undefined ? 'accepted' : Date.parse(m.expires_at) < now ? 'expired' : 'outstanding'));
  }
  for (const a of ledger.accepted.values()) if (!ledger.mintedByHash.has(a.content_hash)) rows.push(row('accepted', a, a, 'accepted'));
  return rows.sort((x, y) => (Date.parse(x.created_at) || 0) - (Date.parse(y.created_at) || 0));
}

/** The envelope of a package minted here, by handoff id or content hash (or an unambiguous prefix of 8+ hex digits). */
export async function exportHandoff(scope: HandoffScope, id: string): Promise<{ envelope: Envelope; minted: MintedData }> {
  const ledger = await scope.dir.read(HANDOFF_STORE);
  let found = ledger.minted.get(id);
  if (found === undefined && /^[0-9a-f]{8,64}$/.test(id)) {
    const matches = [...ledger.mintedByHash.keys()].filter((h) => h.startsWith(id));
    if (matches.length > 1) throw invalid(`${id} matches ${matches.length} packages`, 'give more digits of the content hash, or the handoff id');
    if (matches.length === 1) found = ledger.minted.get(ledger.mintedByHash.get(matches[0]!)!);
  }
  if (found === undefined) throw notFound(`no handoff ${JSON.stringify(id)} was minted here`, 'see `crux handoff list`');
  const { bytes: _bytes, ...kept } = found;
  // The package and message as minted: opened on an encrypted store (exit 6 without its key).
  const envelope = { ...found.envelope, payload_b64: openSealed(found.envelope.payload_b64, handoffPlace(found, 'package')) };
  const minted = { ...kept, envelope, message: openSealed(found.message, handoffPlace(found, 'message')) };
  return { envelope, minted };
}
