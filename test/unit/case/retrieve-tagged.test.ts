// Retrieval among one project's cases (what SessionStart offers a resumed session): the tag must be the case's
// own, not a word of its task or of another tag; ranking among those is retrieve's.
import { describe, expect, it } from 'vitest';
import { retrieveTaggedCases } from '../../../src/domain/case/store';
import type { JournalStore } from '../../../src/journal/core/store-boundary';
import { bankOf, recorded } from './fixtures';

const QUERY = { text: 'checkout retry idempotent', topK: 3, onlySuccess: true, minSimilarity: 0 };

describe('retrieveTaggedCases', () => {
  const bank = bankOf([
    recorded({ id: 'a', task: 'make the checkout retry idempotent', tags: ['shop'] }),
    recorded({ id: 'b', task: 'checkout retry in the shop', tags: [] }),
    recorded({ id: 'c', task: 'checkout retry idempotent', tags: ['other'] }),
    recorded({ id: 'd', task: 'checkout retry idempotent', tags: ['acme-shop'] }),
    recorded({ id: 'e', task: 'checkout retry', tags: ['shop'], success: false }),
    recorded({ id: 'f', task: 'checkout', tags: ['shop'] }),
  ]);
  const scope = { dir: { readTerms: (_spec: unknown, _query: unknown, use: (b: unknown) => unknown) => use(bank) } as unknown as JournalStore, now: 0 };
  const ids = async (tag: string, query = QUERY) => (await retrieveTaggedCases(scope, query, tag)).map((r) => r.case.case_id);

  it('keeps the cases with the tag itself, best first, at most top-k', async () => {
    expect(await ids('shop')).toEqual(['a', 'f']);
    expect(await ids('shop', { ...QUERY, topK: 1 })).toEqual(['a']);
    expect(await ids('acme-shop')).toEqual(['d']);
    expect(await ids('other')).toEqual(['c']);
    expect(await ids('shop', { ...QUERY, onlySuccess: false })).toEqual(['a', 'e', 'f']);
    expect(await ids('shop', { ...QUERY, minSimilarity: 0.5 })).toEqual(['a']);
    expect(await ids('nowhere')).toEqual([]);
  });
});
