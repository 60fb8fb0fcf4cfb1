// facts.jsonl: facts that arrived inside accepted packages, each kept as its exact JSON (tenant, horizon, actor intact).
import { declareEvents, type DraftOf, type SealedFields, type StoreSpec, unhandledEvent } from '../../journal/codec/store-spec';
import { isSealed, openSealed } from '../../journal/codec/cipher';
import type { JournalRecord } from '../../journal/codec/record';
import type { LinePosition } from '../../journal/codec/scan';
import type { BundlableFact } from './bundle';

export const FACT_EVENTS = { stored: 'fact.stored' } as const satisfies Record<string, keyof FactEventMap>;

export interface FactStoredData {
  /** The agent that accepted the package: the fact is visible to it (and bundled only by it). */
  readonly agent: string;
  readonly fact_id: string;
  /** content_hash of the package it came in. */
  readonly package: string;
  /** The fact's JSON exactly as the package carried it (a string, so numbers and key order survive); sealed on an encrypted store. */
  readonly json: string;
  /** On an encrypted store, beside the sealed json: the fields the bundling rules read (FACT_SEALED). */
  readonly rules?: FactRules;
}

/** What the bundling rules read of a fact: plain beside its sealed JSON on an encrypted store. */
type FactRules = Omit<BundlableFact, 'fact_id' | 'raw'>;

/** Every event facts.jsonl may contain, and its payload. */
export interface FactEventMap {
  'fact.stored': FactStoredData;
}

const FACTS = declareEvents<FactEventMap>({
  'fact.stored': (d) =>
    typeof d.agent === 'string' && typeof d.fact_id === 'string' && typeof d.json === 'string'
      ? {
          agent: d.agent,
          fact_id: d.fact_id,
          json: d.json,
          package: typeof d.package === 'string' ? d.package : '',
          ...(isRules(d.rules) ? { rules: d.rules } : {}),
        }
      : 'no agent, fact_id or json',
});
const FACT_VOCABULARY = FACTS.vocabulary;

export interface StoredFact extends BundlableFact {
  readonly agent: string;
  readonly package: string;
  readonly bytes: number;
}

/** agent → fact_id → the latest version of the fact. */
export type Facts = Map<string, Map<string, StoredFact>>;

/** Reads the fields the bundling rules need; a fact that does not parse as an object is not kept. */
function describeFact(json: string): Omit<BundlableFact, 'fact_id' | 'raw'> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const f = v as Record<string, unknown>;
  return {
    entity: typeof f.entity === 'string' ? f.entity : null,
    private: f.private === true,
    deleted: f.deleted === true,
    stored_at: typeof f.stored_at === 'string' ? f.stored_at : null,
  };
}

const isRules = (r: any): r is FactRules =>
  r !== null &&
  typeof r === 'object' &&
  (r.entity === null || typeof r.entity === 'string') &&
  typeof r.private === 'boolean' &&
  typeof r.deleted === 'boolean' &&
  (r.stored_at === null || typeof r.stored_at === 'string');

/**
 * What lies sealed on an encrypted store (SPEC §13): a fact's JSON, at its agent and id. The fields the bundling
 * rules read of it (entity, private, deleted, stored_at: ids, flags and a time) are kept plain beside it in
 * `rules`, so that the facts fold without the key; `handoff mint --include-facts` opens the JSON it bundles.
 */
const FACT_SEALED: SealedFields = {
  fields: { 'fact.stored': { json: 'json' } },
  entity: (data) => `${String(data.agent)}:${String(data.fact_id)}`,
  derive(plain, key) {
    if (key === undefined) {
      const { rules: _, ...rest } = plain;
      return rest;
    }
    const rules = typeof plain.json === 'string' ? describeFact(plain.json) : undefined;
    return rules === undefined ? plain : { ...plain, rules };
  },
};

function evolve(facts: Facts, record: JournalRecord, at: LinePosition): void {
  const event = FACTS.parse(record);
  if (typeof event === 'string') return; // reads report it as a bad line
  switch (event.ev) {
    case 'fact.stored': {
      const d = event.data;
      const described = isSealed(d.json) ? d.rules : describeFact(d.json);
      if (described === undefined) return;
      const mine = facts.get(d.agent) ?? new Map<string, StoredFact>();
      mine.set(d.fact_id, {
        entity: described.entity,
        private: described.private,
        deleted: described.deleted,
        stored_at: described.stored_at,
        fact_id: d.fact_id,
        raw: d.json,
        agent: d.agent,
        package: d.package,
        bytes: at.length,
      });
      facts.set(d.agent, mine);
      return;
    }
    default:
      unhandledEvent(event.ev);
  }
}

export const FACT_STORE: StoreSpec<Facts> = {
  file: 'facts.jsonl',
  vocabulary: FACT_VOCABULARY,
  initial: () => new Map(),
  evolve,
  sealed: FACT_SEALED,
  live: (facts): DraftOf<FactEventMap>[] =>
    [...facts.values()].flatMap((mine) =>
      [...mine.values()].map((f) => {
        const rules = { entity: f.entity, private: f.private, deleted: f.deleted, stored_at: f.stored_at };
        const data: FactStoredData = { agent: f.agent, fact_id: f.fact_id, package: f.package, json: f.raw, ...(isSealed(f.raw) ? { rules } : {}) };
        return { ev: FACT_EVENTS.stored, data };
      }),
    ),
  liveBytes: (facts) => {
    let total = 0;
    for (const mine of facts.values()) for (const f of mine.values()) total += f.bytes;
    return total;
  },
};

/**
 * The facts an agent can see (and so bundle): the ones accepted as that agent, their JSON open (on an encrypted
 * store it needs the key: exit 6 naming its id without it).
 */
export const factsVisibleTo = (facts: Facts, agent: string): StoredFact[] =>
  [...(facts.get(agent)?.values() ?? [])].map((f) =>
    isSealed(f.raw) ? { ...f, raw: openSealed(f.raw, { file: FACT_STORE.file, entity: `${f.agent}:${f.fact_id}`, field: 'json' }) } : f,
  );
