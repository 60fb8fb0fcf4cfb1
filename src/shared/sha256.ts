// SHA-256 of a string's UTF-8, as lowercase hex: record lines' hashes (journal/codec/record.ts) and the ids derived
// from content (domain/transcript/stretch.ts). A process's first few KB of text go through plain JavaScript
// (sha256-small.ts), the next through a small WebAssembly module, and past a few dozen KB node:crypto is loaded.
import { SHA_DIGEST_AT, SHA_INPUT_AT, wasmKernels } from './wasm';
import { smallSha256Hex } from './sha256-small';

// Measured, for a command that hashes a few lines (a `session get` hashes two: the cache binding's head and the
// record; a put a few more), in wall time on the 2-core machine (README: issue 23's ninth turn):
// - node:crypto hashes fastest but costs ~3 ms (13 M instructions) to load: it pulls in Node's streams (its
//   binding alone, without the JavaScript, takes ~0.45 ms to set up).
// - The WebAssembly kernel hashes such a line in a few µs, but the module's first use costs ~1 ms: compiling it,
//   instantiating it (each instance reserves its guarded memory and posts work to V8's worker threads).
// - sha256-small.ts, from the code cache, hashes a 300-byte line in ~0.1–0.2 ms on its first calls (V8's
//   interpreter, no feedback yet) and ~0.07 ms after: a `get` through it took ~0.6 ms less wall time than
//   through the kernel. It costs ~0.25 µs a byte while cold, so past SMALL_UNITS the kernel pays for itself.
// Past NATIVE_AFTER_UNITS of text (a replay, a check, an import) node:crypto is loaded all the same. Without
// WebAssembly (`node --jitless`) sha256-small.ts does the kernel's share too.

/** The most bytes hashed in one pass (exported for its test: longer strings go through in chunks). */
export const INPUT_CHUNK = 64 * 1024 - SHA_INPUT_AT - 128;

interface WasmSha {
  /** Compresses the first n whole 64-byte blocks of the input. */
  readonly blocks: (n: number) => void;
  /** Pads and compresses the input's first `length` bytes, the end of a message of `total` bytes; writes the hex. */
  readonly finish: (length: number, total: number) => void;
  readonly input: Uint8Array;
  readonly digest: Buffer;
  readonly encoder: InstanceType<typeof TextEncoder>;
}
let wasm: WasmSha | null | undefined;

function loadWasm(): WasmSha | null {
  const k = wasmKernels();
  if (k === null) return null;
  return {
    blocks: k.blocks,
    finish: k.finish,
    input: new Uint8Array(k.memory, SHA_INPUT_AT, INPUT_CHUNK),
    digest: Buffer.from(k.memory, SHA_DIGEST_AT, 64),
    encoder: new TextEncoder(),
  };
}

/**
 * The WebAssembly implementation (exported for its test). The string is encoded straight into the module's
 * memory, a chunk at a time: encodeInto never splits a character, and writes a lone surrogate as U+FFFD, as
 * TextEncoder (so @noble/hashes' utf8ToBytes) and node:crypto do.
 */
export function wasmSha256Hex(text: string): string {
  if (wasm === undefined) wasm = loadWasm(); // null (no WebAssembly) is kept: not tried again each call
  if (wasm === null) return smallSha256Hex(text);
  const { blocks, finish, input, encoder } = wasm;
  let rest = text;
  let filled = 0;
  let total = 0;
  for (;;) {
    const { read, written } = encoder.encodeInto(rest, filled === 0 ? input : input.subarray(filled));
    total += written;
    filled += written;
    if (read === rest.length) break;
    rest = rest.slice(read);
    // The whole blocks go now; the bytes of the last partial one move to the front of the input.
    blocks(filled >>> 6);
    const whole = filled & ~63;
    input.copyWithin(0, whole, filled);
    filled -= whole;
  }
  finish(filled, total);
  return wasm.digest.toString('latin1');
}

// node:crypto costs ~13 M instructions to load, and the module's first calls run in V8's baseline tier (~350
// instructions a byte): past about what that load costs (32,768 UTF-16 units) node:crypto is loaded. A get, a
// put, a close or a case record hashes far less; a limited list of 24 or 50 rows at 1M hashes 10–20 k units,
// and switching at 8,192 cost it ~14 M instructions (9%). A replay, a check, an import say beforehand how much
// they will hash (expectHashUnits), and load it at once.
const NATIVE_AFTER_UNITS = 32_768;
/** The UTF-16 units a process hashes in plain JavaScript before it instantiates the WebAssembly kernel. */
const SMALL_UNITS = 4_096;
let hashedUnits = 0;
let native: ((text: string) => string) | undefined;
/** Set by expectHashUnits: the rest of this process's hashing is more than SMALL_UNITS. */
let kernelNow = false;

function loadNative(): (text: string) => string {
  const { hash } = require('node:crypto') as typeof import('node:crypto');
  native = (text) => hash('sha256', text, 'hex');
  return native;
}

/**
 * A caller about to hash `units` UTF-16 units of text in small pieces (the lines of that many bytes of journal):
 * past NATIVE_AFTER_UNITS, node:crypto is loaded now, not after the first NATIVE_AFTER_UNITS of them; past
 * SMALL_UNITS, the WebAssembly kernel takes over now. An estimate is enough: the answer is the same either way.
 */
export function expectHashUnits(units: number): void {
  if (native !== undefined) return;
  if (units > NATIVE_AFTER_UNITS) loadNative();
  // Past SMALL_UNITS the kernel pays for its start-up: taken now, not after SMALL_UNITS hashed cold.
  else if (hashedUnits + units > SMALL_UNITS) kernelNow = true;
}

/**
 * A command about to run a WebAssembly module of its own (case retrieve's ranking, domain/case/rank-wasm.ts):
 * V8's start-up for WebAssembly is paid once a process (~0.7–1.2 ms for the first module here, ~0.2–0.4 ms for the
 * next), so the kernel hashes from the first line, not the plain JavaScript before it.
 */
export function expectWebAssembly(): void {
  kernelNow = true;
}

/** SHA-256 of `text`'s UTF-8 (a lone surrogate as U+FFFD), as 64 lowercase hex digits. */
export function sha256Hex(text: string): string {
  if (native === undefined && (hashedUnits += text.length) > NATIVE_AFTER_UNITS) loadNative();
  if (native !== undefined) return native(text);
  return hashedUnits <= SMALL_UNITS && !kernelNow ? smallSha256Hex(text) : wasmSha256Hex(text);
}
