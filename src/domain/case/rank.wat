;; The sparse ranking kernel of rank-wasm.ts: merges a query's posting lists (each ascending by slot), one
;; candidate per distinct slot with its similarity, then the top-k floor and the candidates at or above it.
;; Assembled by wabt's wat2wasm (`npx wabt@1.0.39`: wat2wasm rank.wat, then base64 into rank-wasm.ts).
(module
  (memory (export "memory") 1)
  ;; How many candidates the last merge gave a saturated meta (their similarity needs the exact term count).
  (global $saturated (export "saturated") (mut i32) (i32.const 0))

  ;; Lists: `nl` pairs of u32 (position, end) at `lists`, into the u32 slots at `slots` and u32 metas at `metas`.
  ;; Writes, per distinct slot below `limit`, 16 bytes at `out` (f64 similarity, u32 slot, u32 meta): a meta whose
  ;; term count saturates (127) gets minus the shared count as its similarity. Skips a slot that fails
  ;; `onlySuccess` or whose similarity is below `min`. Returns how many, or -1 when a list is not strictly ascending.
  (func (export "merge")
    (param $lists i32) (param $nl i32) (param $slots i32) (param $metas i32) (param $limit i32)
    (param $q f64) (param $onlySuccess i32) (param $min f64) (param $out i32) (result i32)
    (local $i i32) (local $at i32) (local $p i32) (local $s i32) (local $least i32) (local $found i32)
    (local $first i32) (local $n i32) (local $meta i32) (local $terms i32) (local $d i32) (local $o i32)
    (local $sim f64) (local $last i64)
    (local.set $last (i64.const -1))
    (global.set $saturated (i32.const 0))
    (block $done
      (loop $next
        ;; The least slot at the lists' heads.
        (local.set $found (i32.const 0))
        (local.set $i (i32.const 0))
        (block $scanned
          (loop $scan
            (br_if $scanned (i32.ge_u (local.get $i) (local.get $nl)))
            (local.set $at (i32.add (local.get $lists) (i32.shl (local.get $i) (i32.const 3))))
            (local.set $p (i32.load (local.get $at)))
            (if (i32.lt_u (local.get $p) (i32.load offset=4 (local.get $at)))
              (then
                (local.set $s (i32.load (i32.add (local.get $slots) (i32.shl (local.get $p) (i32.const 2)))))
                (if (i32.or (i32.eqz (local.get $found)) (i32.lt_u (local.get $s) (local.get $least)))
                  (then
                    (local.set $least (local.get $s))
                    (local.set $first (local.get $p))
                    (local.set $found (i32.const 1))))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $scan)))
        (br_if $done (i32.eqz (local.get $found)))
        ;; Ascending lists give each slot once per list, after the last one taken.
        (if (i64.ge_s (local.get $last) (i64.extend_i32_u (local.get $least)))
          (then (return (i32.const -1))))
        (local.set $last (i64.extend_i32_u (local.get $least)))
        ;; Past the bank's slots (a damaged cache): nothing more to take.
        (br_if $done (i32.ge_u (local.get $least) (local.get $limit)))
        ;; How many lists hold it; each moves past it.
        (local.set $n (i32.const 0))
        (local.set $i (i32.const 0))
        (block $counted
          (loop $count
            (br_if $counted (i32.ge_u (local.get $i) (local.get $nl)))
            (local.set $at (i32.add (local.get $lists) (i32.shl (local.get $i) (i32.const 3))))
            (local.set $p (i32.load (local.get $at)))
            (if (i32.lt_u (local.get $p) (i32.load offset=4 (local.get $at)))
              (then
                (if (i32.eq (i32.load (i32.add (local.get $slots) (i32.shl (local.get $p) (i32.const 2)))) (local.get $least))
                  (then
                    (local.set $n (i32.add (local.get $n) (i32.const 1)))
                    (i32.store (local.get $at) (i32.add (local.get $p) (i32.const 1)))))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $count)))
        (local.set $meta (i32.load (i32.add (local.get $metas) (i32.shl (local.get $first) (i32.const 2)))))
        (br_if $next (i32.and (local.get $onlySuccess) (i32.eqz (i32.and (local.get $meta) (i32.const 0x8000)))))
        (local.set $terms (i32.and (i32.shr_u (local.get $meta) (i32.const 8)) (i32.const 127)))
        (if (i32.eq (local.get $terms) (i32.const 127))
          (then
            (global.set $saturated (i32.add (global.get $saturated) (i32.const 1)))
            (local.set $sim (f64.neg (f64.convert_i32_u (local.get $n)))))
          (else
            (local.set $sim
              (f64.div
                (f64.convert_i32_u (local.get $n))
                (f64.sub (f64.add (local.get $q) (f64.convert_i32_u (local.get $terms))) (f64.convert_i32_u (local.get $n)))))
            (br_if $next (f64.lt (local.get $sim) (local.get $min)))))
        (local.set $o (i32.add (local.get $out) (i32.shl (local.get $d) (i32.const 4))))
        (f64.store (local.get $o) (local.get $sim))
        (i32.store offset=8 (local.get $o) (local.get $least))
        (i32.store offset=12 (local.get $o) (local.get $meta))
        (local.set $d (i32.add (local.get $d) (i32.const 1)))
        (br $next)))
    (local.get $d))

  ;; The k-th best similarity (not below 0) of the `d` candidates at `out`, kept best first in `k` f64s at
  ;; `best`; 0 when there are no more than k of them (every one is then kept).
  (func (export "floor") (param $out i32) (param $d i32) (param $k i32) (param $best i32) (result f64)
    (local $c i32) (local $sim f64) (local $kept i32) (local $j i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $c) (local.get $d)))
        (local.set $sim (f64.load (i32.add (local.get $out) (i32.shl (local.get $c) (i32.const 4)))))
        (local.set $c (i32.add (local.get $c) (i32.const 1)))
        (br_if $next (f64.lt (local.get $sim) (f64.const 0)))
        ;; Not better than the k-th kept: passed over.
        (br_if $next
          (i32.and
            (i32.eq (local.get $kept) (local.get $k))
            (f64.le (local.get $sim) (f64.load (i32.add (local.get $best) (i32.shl (i32.sub (local.get $k) (i32.const 1)) (i32.const 3)))))))
        (if (i32.lt_u (local.get $kept) (local.get $k))
          (then (local.set $kept (i32.add (local.get $kept) (i32.const 1)))))
        ;; Inserted in order: the worse ones move down one (the last drops off).
        (local.set $j (i32.sub (local.get $kept) (i32.const 1)))
        (block $placed
          (loop $shift
            (br_if $placed (i32.eqz (local.get $j)))
            (br_if $placed
              (f64.ge
                (f64.load (i32.add (local.get $best) (i32.shl (i32.sub (local.get $j) (i32.const 1)) (i32.const 3))))
                (local.get $sim)))
            (f64.store
              (i32.add (local.get $best) (i32.shl (local.get $j) (i32.const 3)))
              (f64.load (i32.add (local.get $best) (i32.shl (i32.sub (local.get $j) (i32.const 1)) (i32.const 3)))))
            (local.set $j (i32.sub (local.get $j) (i32.const 1)))
            (br $shift)))
        (f64.store (i32.add (local.get $best) (i32.shl (local.get $j) (i32.const 3))) (local.get $sim))
        (br $next)))
    (if (result f64) (i32.lt_u (local.get $kept) (local.get $k))
      (then (f64.const 0))
      (else (f64.load (i32.add (local.get $best) (i32.shl (i32.sub (local.get $k) (i32.const 1)) (i32.const 3)))))))

  ;; Moves the candidates at `out` whose similarity is at least `floor` (and not below 0) to its front, in
  ;; order; returns how many.
  (func (export "keep") (param $out i32) (param $d i32) (param $floor f64) (result i32)
    (local $c i32) (local $m i32) (local $from i32) (local $to i32) (local $sim f64)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $c) (local.get $d)))
        (local.set $from (i32.add (local.get $out) (i32.shl (local.get $c) (i32.const 4))))
        (local.set $sim (f64.load (local.get $from)))
        (local.set $c (i32.add (local.get $c) (i32.const 1)))
        (br_if $next (i32.or (f64.lt (local.get $sim) (local.get $floor)) (f64.lt (local.get $sim) (f64.const 0))))
        (local.set $to (i32.add (local.get $out) (i32.shl (local.get $m) (i32.const 4))))
        (i64.store (local.get $to) (i64.load (local.get $from)))
        (i64.store offset=8 (local.get $to) (i64.load offset=8 (local.get $from)))
        (local.set $m (i32.add (local.get $m) (i32.const 1)))
        (br $next)))
    (local.get $m))
)
