;; The WebAssembly kernels of src/shared/wasm.ts: SHA-256 (FIPS 180-4) for src/shared/sha256.ts and CRC-32 (the
;; zlib polynomial) for src/journal/derived/checksum.ts, in one module: a process compiles and instantiates one
;; module, not two (each instance reserves its own guarded memory and wakes V8's worker threads). Memory, two
;; 64 KiB pages:
;;   0      SHA-256: K, the 64 round constants (little-endian words)
;;   256    SHA-256: W, the message schedule (64 words)
;;   512    SHA-256: H, the hash state (8 words)
;;   544    SHA-256: the digest as 64 lowercase hex digits
;;   1024   SHA-256: the input: whole blocks, then the last bytes, which `finish` pads in place (≤ 72 bytes past them)
;;   65536  CRC-32: its table, 256 words
;;   66560  CRC-32: the bytes to checksum (up to the end of the second page)
(module
  (memory (export "memory") 2)
  (data (i32.const 0)
    "\98\2f\8a\42\91\44\37\71\cf\fb\c0\b5\a5\db\b5\e9\5b\c2\56\39\f1\11\f1\59\a4\82\3f\92\d5\5e\1c\ab"
    "\98\aa\07\d8\01\5b\83\12\be\85\31\24\c3\7d\0c\55\74\5d\be\72\fe\b1\de\80\a7\06\dc\9b\74\f1\9b\c1"
    "\c1\69\9b\e4\86\47\be\ef\c6\9d\c1\0f\cc\a1\0c\24\6f\2c\e9\2d\aa\84\74\4a\dc\a9\b0\5c\da\88\f9\76"
    "\52\51\3e\98\6d\c6\31\a8\c8\27\03\b0\c7\7f\59\bf\f3\0b\e0\c6\47\91\a7\d5\51\63\ca\06\67\29\29\14"
    "\85\0a\b7\27\38\21\1b\2e\fc\6d\2c\4d\13\0d\38\53\54\73\0a\65\bb\0a\6a\76\2e\c9\c2\81\85\2c\72\92"
    "\a1\e8\bf\a2\4b\66\1a\a8\70\8b\4b\c2\a3\51\6c\c7\19\e8\92\d1\24\06\99\d6\85\35\0e\f4\70\a0\6a\10"
    "\16\c1\a4\19\08\6c\37\1e\4c\77\48\27\b5\bc\b0\34\b3\0c\1c\39\4a\aa\d8\4e\4f\ca\9c\5b\f3\6f\2e\68"
    "\ee\82\8f\74\6f\63\a5\78\14\78\c8\84\08\02\c7\8c\fa\ff\be\90\eb\6c\50\a4\f7\a3\f9\be\f2\78\71\c6")

  ;; H's initial value: before the first hash and after each.
  (func $reset
    (i32.store offset=512 (i32.const 0) (i32.const 0x6a09e667))
    (i32.store offset=516 (i32.const 0) (i32.const 0xbb67ae85))
    (i32.store offset=520 (i32.const 0) (i32.const 0x3c6ef372))
    (i32.store offset=524 (i32.const 0) (i32.const 0xa54ff53a))
    (i32.store offset=528 (i32.const 0) (i32.const 0x510e527f))
    (i32.store offset=532 (i32.const 0) (i32.const 0x9b05688c))
    (i32.store offset=536 (i32.const 0) (i32.const 0x1f83d9ab))
    (i32.store offset=540 (i32.const 0) (i32.const 0x5be0cd19)))
  ;; Set-up: H's initial value and CRC-32's table.
  (func $init (call $reset) (call $table))
  (start $init)

  ;; A big-endian word as a number (memory is little-endian).
  (func $swap (param $x i32) (result i32)
    (i32.or
      (i32.and (i32.rotl (local.get $x) (i32.const 8)) (i32.const 0x00ff00ff))
      (i32.and (i32.rotr (local.get $x) (i32.const 8)) (i32.const 0xff00ff00))))

  ;; Compresses the 64-byte block at $p into H.
  (func $block (param $p i32)
    (local $i i32) (local $x i32) (local $y i32) (local $t i32)
    (local $a i32) (local $b i32) (local $c i32) (local $d i32)
    (local $e i32) (local $f i32) (local $g i32) (local $h i32)
    ;; W[0..15]: the block's words. $i counts bytes (4 a word) throughout.
    (loop $load
      (i32.store offset=256 (local.get $i) (call $swap (i32.load (i32.add (local.get $p) (local.get $i)))))
      (br_if $load (i32.ne (local.tee $i (i32.add (local.get $i) (i32.const 4))) (i32.const 64))))
    ;; W[16..63] = σ1(W[i-2]) + W[i-7] + σ0(W[i-15]) + W[i-16]
    (loop $schedule
      (local.set $x (i32.load offset=196 (local.get $i)))
      (local.set $y (i32.load offset=248 (local.get $i)))
      (i32.store offset=256 (local.get $i)
        (i32.add
          (i32.add (i32.load offset=192 (local.get $i)) (i32.load offset=228 (local.get $i)))
          (i32.add
            (i32.xor
              (i32.xor (i32.rotr (local.get $x) (i32.const 7)) (i32.rotr (local.get $x) (i32.const 18)))
              (i32.shr_u (local.get $x) (i32.const 3)))
            (i32.xor
              (i32.xor (i32.rotr (local.get $y) (i32.const 17)) (i32.rotr (local.get $y) (i32.const 19)))
              (i32.shr_u (local.get $y) (i32.const 10))))))
      (br_if $schedule (i32.ne (local.tee $i (i32.add (local.get $i) (i32.const 4))) (i32.const 256))))
    (local.set $a (i32.load offset=512 (i32.const 0)))
    (local.set $b (i32.load offset=516 (i32.const 0)))
    (local.set $c (i32.load offset=520 (i32.const 0)))
    (local.set $d (i32.load offset=524 (i32.const 0)))
    (local.set $e (i32.load offset=528 (i32.const 0)))
    (local.set $f (i32.load offset=532 (i32.const 0)))
    (local.set $g (i32.load offset=536 (i32.const 0)))
    (local.set $h (i32.load offset=540 (i32.const 0)))
    (local.set $i (i32.const 0))
    (loop $rounds
      ;; $t = h + Σ1(e) + Ch(e, f, g) + K[i] + W[i]
      (local.set $t
        (i32.add
          (i32.add
            (i32.add (local.get $h)
              (i32.xor
                (i32.xor (i32.rotr (local.get $e) (i32.const 6)) (i32.rotr (local.get $e) (i32.const 11)))
                (i32.rotr (local.get $e) (i32.const 25))))
            (i32.xor (local.get $g) (i32.and (local.get $e) (i32.xor (local.get $f) (local.get $g)))))
          (i32.add (i32.load (local.get $i)) (i32.load offset=256 (local.get $i)))))
      (local.set $h (local.get $g))
      (local.set $g (local.get $f))
      (local.set $f (local.get $e))
      (local.set $e (i32.add (local.get $d) (local.get $t)))
      (local.set $d (local.get $c))
      ;; a = $t + Σ0(a) + Maj(a, b, c)
      (local.set $t
        (i32.add (local.get $t)
          (i32.add
            (i32.xor
              (i32.xor (i32.rotr (local.get $a) (i32.const 2)) (i32.rotr (local.get $a) (i32.const 13)))
              (i32.rotr (local.get $a) (i32.const 22)))
            (i32.or
              (i32.and (local.get $a) (local.get $b))
              (i32.and (local.get $c) (i32.or (local.get $a) (local.get $b)))))))
      (local.set $c (local.get $b))
      (local.set $b (local.get $a))
      (local.set $a (local.get $t))
      (br_if $rounds (i32.ne (local.tee $i (i32.add (local.get $i) (i32.const 4))) (i32.const 256))))
    (i32.store offset=512 (i32.const 0) (i32.add (i32.load offset=512 (i32.const 0)) (local.get $a)))
    (i32.store offset=516 (i32.const 0) (i32.add (i32.load offset=516 (i32.const 0)) (local.get $b)))
    (i32.store offset=520 (i32.const 0) (i32.add (i32.load offset=520 (i32.const 0)) (local.get $c)))
    (i32.store offset=524 (i32.const 0) (i32.add (i32.load offset=524 (i32.const 0)) (local.get $d)))
    (i32.store offset=528 (i32.const 0) (i32.add (i32.load offset=528 (i32.const 0)) (local.get $e)))
    (i32.store offset=532 (i32.const 0) (i32.add (i32.load offset=532 (i32.const 0)) (local.get $f)))
    (i32.store offset=536 (i32.const 0) (i32.add (i32.load offset=536 (i32.const 0)) (local.get $g)))
    (i32.store offset=540 (i32.const 0) (i32.add (i32.load offset=540 (i32.const 0)) (local.get $h))))

  ;; Compresses the $n whole blocks at the input, for a message longer than the input area.
  (func $blocks (export "blocks") (param $n i32)
    (local $p i32) (local $end i32)
    (local.set $p (i32.const 1024))
    (local.set $end (i32.add (i32.const 1024) (i32.shl (local.get $n) (i32.const 6))))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (call $block (local.get $p))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (br $each))))

  ;; Pads and compresses the $len bytes at the input, the end of a message of $total bytes (< 2^32), writes
  ;; the digest's hex and resets H for the next message.
  (func (export "finish") (param $len i32) (param $total i32)
    (local $q i32) (local $x i32) (local $n i32)
    (local.set $q (i32.add (i32.const 1024) (local.get $len)))
    (i32.store8 (local.get $q) (i32.const 0x80))
    (local.set $q (i32.add (local.get $q) (i32.const 1)))
    ;; zeros up to 56 bytes past a block's start, then the length in bits as 64 big-endian bits
    (local.set $n (i32.and (i32.sub (i32.const 55) (local.get $len)) (i32.const 63)))
    (memory.fill (local.get $q) (i32.const 0) (local.get $n))
    (local.set $q (i32.add (local.get $q) (local.get $n)))
    (i32.store (local.get $q) (call $swap (i32.shr_u (local.get $total) (i32.const 29))))
    (i32.store offset=4 (local.get $q) (call $swap (i32.shl (local.get $total) (i32.const 3))))
    (call $blocks (i32.shr_u (i32.sub (i32.add (local.get $q) (i32.const 8)) (i32.const 1024)) (i32.const 6)))
    ;; hex: each word of H, its nibbles from the top; a nibble n is '0' + n, or 'a' + n - 10 past 9
    (local.set $q (i32.const 544))
    (loop $words
      (local.set $x (i32.load offset=512 (i32.shr_u (i32.sub (local.get $q) (i32.const 544)) (i32.const 1))))
      (local.set $n (i32.add (local.get $q) (i32.const 8)))
      (loop $digits
        (i32.store8 (local.get $q)
          (i32.add
            (i32.add (i32.shr_u (local.get $x) (i32.const 28)) (i32.const 48))
            (select (i32.const 39) (i32.const 0) (i32.gt_u (i32.shr_u (local.get $x) (i32.const 28)) (i32.const 9)))))
        (local.set $x (i32.shl (local.get $x) (i32.const 4)))
        (br_if $digits (i32.ne (local.tee $q (i32.add (local.get $q) (i32.const 1))) (local.get $n))))
      (br_if $words (i32.ne (local.get $q) (i32.const 608))))
    (call $reset))

  ;; CRC-32's table at 65536: entry n is n's remainder, bit by bit.
  (func $table
    (local $n i32) (local $c i32) (local $k i32)
    (loop $entries
      (local.set $c (local.get $n))
      (local.set $k (i32.const 8))
      (loop $bits
        (local.set $c
          (select
            (i32.xor (i32.const 0xedb88320) (i32.shr_u (local.get $c) (i32.const 1)))
            (i32.shr_u (local.get $c) (i32.const 1))
            (i32.and (local.get $c) (i32.const 1))))
        (br_if $bits (local.tee $k (i32.sub (local.get $k) (i32.const 1)))))
      (i32.store offset=65536 (i32.shl (local.get $n) (i32.const 2)) (local.get $c))
      (br_if $entries (i32.ne (local.tee $n (i32.add (local.get $n) (i32.const 1))) (i32.const 256)))))

  ;; CRC-32 of the $len bytes at 66560, continuing from $seed (0 for a fresh checksum).
  (func (export "crc") (param $seed i32) (param $len i32) (result i32)
    (local $c i32) (local $p i32) (local $end i32)
    (local.set $c (i32.xor (local.get $seed) (i32.const -1)))
    (local.set $p (i32.const 66560))
    (local.set $end (i32.add (i32.const 66560) (local.get $len)))
    (block $done
      (loop $bytes
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c
          (i32.xor
            (i32.load offset=65536
              (i32.shl (i32.and (i32.xor (local.get $c) (i32.load8_u (local.get $p))) (i32.const 255)) (i32.const 2)))
            (i32.shr_u (local.get $c) (i32.const 8))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $bytes)))
    (i32.xor (local.get $c) (i32.const -1))))
