;; One tenant's int8 vectors scored against a 7-bit query with 128-bit relaxed SIMD (16 dimensions a
;; step): out[i] = scales[i] * (sum_j data[i * dim + j] * query[j] - 64 * sums[i]).
;; The query arrives offset into 0..127 (its 7-bit value + 64), so the relaxed dot product's unsigned
;; operand never has its high bit set and every engine computes it exactly (x64: pmaddubsw, whose pair
;; sums stay within 2 * 127 * 127 < 2^15); sums[i] (the row's int8 sum) takes the offset back out.
;; One relaxed dot-add per step where plain SIMD needed four extends, two dots and two adds: measured
;; 2x faster at 100k rows (docs/decisions.md). dim is a multiple of 16; every pointer is a byte offset
;; into this instance's memory, which the caller lays out and grows.
;; Built into int8-scores.ts by scripts/build-wasm.mjs (wabt); the .ts file is committed.
(module
  (memory (export "memory") 1)
  (func (export "scores")
    (param $data i32) (param $scales i32) (param $sums i32) (param $n i32) (param $dim i32)
    (param $query i32) (param $out i32)
    (local $i i32) (local $j i32) (local $row i32) (local $acc v128)
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (local.set $row (i32.add (local.get $data) (i32.mul (local.get $i) (local.get $dim))))
        (block $rowdone
          (loop $cols
            (br_if $rowdone (i32.ge_u (local.get $j) (local.get $dim)))
            (local.set $acc
              (i32x4.relaxed_dot_i8x16_i7x16_add_s
                (v128.load (i32.add (local.get $row) (local.get $j)))
                (v128.load (i32.add (local.get $query) (local.get $j)))
                (local.get $acc)))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $cols)))
        (f32.store
          (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
          (f32.mul
            (f32.load (i32.add (local.get $scales) (i32.shl (local.get $i) (i32.const 2))))
            (f32.convert_i32_s
              (i32.sub
                (i32.add
                  (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
                  (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc))))
                (i32.shl
                  (i32.load (i32.add (local.get $sums) (i32.shl (local.get $i) (i32.const 2))))
                  (i32.const 6))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows)))))
