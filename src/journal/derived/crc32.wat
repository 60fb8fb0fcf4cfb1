(module
  (memory (export "memory") 1)
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
      (i32.store (i32.shl (local.get $n) (i32.const 2)) (local.get $c))
      (br_if $entries (i32.ne (local.tee $n (i32.add (local.get $n) (i32.const 1))) (i32.const 256)))))
  (start $table)
  (func (export "crc") (param $seed i32) (param $len i32) (result i32)
    (local $c i32) (local $p i32) (local $end i32)
    (local.set $c (i32.xor (local.get $seed) (i32.const -1)))
    (local.set $p (i32.const 1024))
    (local.set $end (i32.add (i32.const 1024) (local.get $len)))
    (block $done
      (loop $bytes
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c
          (i32.xor
            (i32.load (i32.shl (i32.and (i32.xor (local.get $c) (i32.load8_u (local.get $p))) (i32.const 255)) (i32.const 2)))
            (i32.shr_u (local.get $c) (i32.const 8))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $bytes)))
    (i32.xor (local.get $c) (i32.const -1))))
