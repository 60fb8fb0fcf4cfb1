// The sparse ranking's per-posting work in WebAssembly: merging a query's posting lists (each ascending by
// slot) into one candidate per slot with its similarity, the top-k floor, and the candidates at or above it.
// A rare word's thousands of postings cost a few instructions each from the first call, where the same loops
// in JS ran cold in V8's interpreter (~1,000 instructions a posting) and were optimized mid-retrieve (~9 M
// more): ~45 M instructions of a 1M-case retrieve. rank.wat beside this file, assembled by wabt's wat2wasm
// (`npx wabt@1.0.39`: wat2wasm rank.wat, then base64). Without WebAssembly (`node --jitless`), or for
// lists that are not ascending (a cache not as written), rank.ts ranks in JS as before.
import type { CaseBank } from './bank';

const RANK_WASM =
  'AGFzbQEAAAABHQNgCX9/f39/fH98fwF/YAR/f39/AXxgA39/fAF/AwQDAAECBQMBAAEGBgF/AUEACwctBQZtZW1vcnkCAAlzYXR1cmF0ZWQDAAVtZXJnZQAABWZsb29yAAEEa2VlcAACCq4FA+sCAwx/AXwBfkJ/IRZBACQAAkADQEEAIQ5BACEJAkADQCAJIAFPDQEgACAJQQN0aiEKIAooAgAhCyALIAooAgRJBEAgAiALQQJ0aigCACEMIA5FIAwgDUlyBEAgDCENIAshD0EBIQ4LCyAJQQFqIQkMAAsLIA5FDQEgFiANrVkEQEF/DwsgDa0hFiANIARPDQFBACEQQQAhCQJAA0AgCSABTw0BIAAgCUEDdGohCiAKKAIAIQsgCyAKKAIESQRAIAIgC0ECdGooAgAgDUYEQCAQQQFqIRAgCiALQQFqNgIACwsgCUEBaiEJDAALCyADIA9BAnRqKAIAIREgBiARQYCAAnFFcQ0AIBFBCHZB/wBxIRIgEkH/AEYEQCMAQQFqJAAgELiaIRUFIBC4IAUgErigIBC4oaMhFSAVIAdjDQELIAggE0EEdGohFCAUIBU5AwAgFCANNgIIIBQgETYCDCATQQFqIRMMAAsLIBML1QEDAX8BfAJ/AkADQCAEIAFPDQEgACAEQQR0aisDACEFIARBAWohBCAFRAAAAAAAAAAAYw0AIAYgAkYgBSADIAJBAWtBA3RqKwMAZXENACAGIAJJBEAgBkEBaiEGCyAGQQFrIQcCQANAIAdFDQEgAyAHQQFrQQN0aisDACAFZg0BIAMgB0EDdGogAyAHQQFrQQN0aisDADkDACAHQQFrIQcMAAsLIAMgB0EDdGogBTkDAAwACwsgBiACSQR8RAAAAAAAAAAABSADIAJBAWtBA3RqKwMACwtoAgR/AXwCQANAIAMgAU8NASAAIANBBHRqIQUgBSsDACEHIANBAWohAyAHIAJjIAdEAAAAAAAAAABjcg0AIAAgBEEEdGohBiAGIAUpAwA3AwAgBiAFKQMINwMIIARBAWohBAwACwsgBAs=';

type Postings = ReturnType<CaseBank['postingsOf']>;

interface Kernel {
  readonly memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  readonly saturated: { readonly value: number };
  merge(lists: number, nl: number, slots: number, metas: number, limit: number, q: number, onlySuccess: number, min: number, out: number): number;
  floor(out: number, d: number, k: number, best: number): number;
  keep(out: number, d: number, floor: number): number;
}

// The little of WebAssembly's API used here (the compiler's lib has no declarations for it).
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Kernel };
}

let kernel: Kernel | null | undefined;

function load(): Kernel | null {
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) return null;
  return new api.Instance(new api.Module(Buffer.from(RANK_WASM, 'base64'))).exports;
}

const PAGE = 65536;
const align8 = (n: number) => (n + 7) & ~7;

/** A candidate the query keeps, in slot order. */
export interface Candidate {
  readonly slot: number;
  readonly similarity: number;
  readonly meta: number;
}

/**
 * The candidates of `lists` whose similarity is at least the top-k-th best (every one, when there are no
 * more than k), in slot order: what ranking offers, for a bank whose slots are all live and a query with no
 * `among`. undefined when the kernel cannot answer (no WebAssembly, lists not ascending, a saturated meta):
 * the caller ranks in JS.
 */
export function keptCandidates(
  bank: CaseBank,
  lists: readonly Postings[],
  total: number,
  q: number,
  query: { readonly topK: number; readonly onlySuccess: boolean; readonly minSimilarity: number },
): Candidate[] | undefined {
  // Loaded once: null (no WebAssembly) is kept too.
  if (kernel === undefined) kernel = load();
  if (kernel === null) return undefined;
  const k = query.topK;
  // Memory: the k best similarities, the lists' (position, end), the slots, their metas, then the candidates.
  const listsAt = align8(8 * k);
  const slotsAt = listsAt + 8 * lists.length;
  const metasAt = align8(slotsAt + 4 * total);
  const outAt = align8(metasAt + 4 * total);
  const need = outAt + 16 * total;
  const have = kernel.memory.buffer.byteLength;
  if (need > have) kernel.memory.grow(Math.ceil((need - have) / PAGE));
  const buffer = kernel.memory.buffer;
  const words = new Uint32Array(buffer);
  const slots = new Uint32Array(buffer, slotsAt, total);
  const metas = new Uint32Array(buffer, metasAt, total);
  let at = 0;
  lists.forEach(({ cached, cachedMeta, later }, i) => {
    words[listsAt / 4 + 2 * i] = at;
    slots.set(cached, at);
    metas.set(cachedMeta, at);
    at += cached.length;
    if (later.length > 0) {
      slots.set(later, at);
      for (const slot of later) metas[at++] = bank.metaOf(slot);
    }
    words[listsAt / 4 + 2 * i + 1] = at;
  });
  const d = kernel.merge(listsAt, lists.length, slotsAt, metasAt, bank.slots, q, query.onlySuccess ? 1 : 0, query.minSimilarity, outAt);
  if (d < 0 || kernel.saturated.value > 0) return undefined;
  const m = kernel.keep(outAt, d, kernel.floor(outAt, d, k, 0));
  const sims = new Float64Array(buffer, outAt, 2 * m);
  const kept: Candidate[] = [];
  for (let c = 0; c < m; c++) kept.push({ similarity: sims[2 * c]!, slot: words[outAt / 4 + 4 * c + 2]!, meta: words[outAt / 4 + 4 * c + 3]! });
  return kept;
}
