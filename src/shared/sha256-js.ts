// SHA-256 of a string's UTF-8 by @noble/hashes, for a Node without WebAssembly (shared/sha256.ts requires it then).
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

export const jsSha256Hex = (text: string): string => bytesToHex(sha256(utf8ToBytes(text)));
