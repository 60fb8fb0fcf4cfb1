// SHA-256 in plain JavaScript, written for a process's first few hashes (shared/sha256.ts says when it runs):
// the state in locals, the message schedule and the round constants in typed arrays, no objects or closures, so
// that V8's interpreter runs it well before any feedback or tier-up exists. FIPS 180-4, §6.2.

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74,
  0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d,
  0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e,
  0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
  0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const W = new Int32Array(64);
const H = new Int32Array(8);
const HEX = '0123456789abcdef';
const encoder = new TextEncoder();
/** The padded message of the last call, reused while it is big enough (a command hashes lines of similar sizes). */
let scratch = new Uint8Array(1024);

/** SHA-256 of `text`'s UTF-8 (a lone surrogate as U+FFFD, as TextEncoder writes it), as 64 lowercase hex digits. */
export function smallSha256Hex(text: string): string {
  // At most 3 bytes a UTF-16 unit, then the padding: 0x80, zeros, the 64-bit bit length.
  const room = ((text.length * 3 + 9 + 63) >>> 6) << 6;
  if (scratch.length < room) scratch = new Uint8Array(room);
  const m = scratch;
  const n = encoder.encodeInto(text, m).written;
  const padded = ((n + 9 + 63) >>> 6) << 6;
  m[n] = 0x80;
  m.fill(0, n + 1, padded - 8);
  const hiBits = Math.floor(n / 0x20000000);
  const loBits = (n << 3) >>> 0;
  m[padded - 8] = hiBits >>> 24;
  m[padded - 7] = hiBits >>> 16;
  m[padded - 6] = hiBits >>> 8;
  m[padded - 5] = hiBits;
  m[padded - 4] = loBits >>> 24;
  m[padded - 3] = loBits >>> 16;
  m[padded - 2] = loBits >>> 8;
  m[padded - 1] = loBits;
  let h0 = 0x6a09e667 | 0;
  let h1 = 0xbb67ae85 | 0;
  let h2 = 0x3c6ef372 | 0;
  let h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f | 0;
  let h5 = 0x9b05688c | 0;
  let h6 = 0x1f83d9ab | 0;
  let h7 = 0x5be0cd19 | 0;
  for (let off = 0; off < padded; off += 64) {
    for (let i = 0; i < 16; i++) {
      const j = off + i * 4;
      W[i] = (m[j]! << 24) | (m[j + 1]! << 16) | (m[j + 2]! << 8) | m[j + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const x = W[i - 15]!;
      const y = W[i - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[i] = (s0 + W[i - 7]! + s1 + W[i - 16]!) | 0;
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  H[0] = h0;
  H[1] = h1;
  H[2] = h2;
  H[3] = h3;
  H[4] = h4;
  H[5] = h5;
  H[6] = h6;
  H[7] = h7;
  let out = '';
  for (let i = 0; i < 8; i++) {
    const v = H[i]!;
    for (let s = 28; s >= 0; s -= 4) out += HEX[(v >>> s) & 15];
  }
  return out;
}
