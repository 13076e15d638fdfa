;; One tenant's int8 vectors scored against an int8 query with 128-bit SIMD (16 dimensions a step):
;; out[i] = scales[i] * sum_j data[i * dim + j] * query[j]. dim is a multiple of 16; every pointer is
;; a byte offset into this instance's memory, which the caller lays out and grows.
;; Built into int8-scores.ts by scripts/build-wasm.mjs (wabt); the .ts file is committed.
(module
  (memory (export "memory") 1)
  (func (export "scores")
    (param $data i32) (param $scales i32) (param $n i32) (param $dim i32) (param $query i32) (param $out i32)
    (local $i i32) (local $j i32) (local $row i32) (local $acc v128) (local $a v128) (local $b v128)
    (block $done
      (loop $rows
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $acc (v128.const i32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (local.set $row (i32.add (local.get $data) (i32.mul (local.get $i) (local.get $dim))))
        (block $rowdone
          (loop $cols
            (br_if $rowdone (i32.ge_u (local.get $j) (local.get $dim)))
            (local.set $a (v128.load (i32.add (local.get $row) (local.get $j))))
            (local.set $b (v128.load (i32.add (local.get $query) (local.get $j))))
            (local.set $acc
              (i32x4.add (local.get $acc)
                (i32x4.dot_i16x8_s
                  (i16x8.extend_low_i8x16_s (local.get $a))
                  (i16x8.extend_low_i8x16_s (local.get $b)))))
            (local.set $acc
              (i32x4.add (local.get $acc)
                (i32x4.dot_i16x8_s
                  (i16x8.extend_high_i8x16_s (local.get $a))
                  (i16x8.extend_high_i8x16_s (local.get $b)))))
            (local.set $j (i32.add (local.get $j) (i32.const 16)))
            (br $cols)))
        (f32.store
          (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 2)))
          (f32.mul
            (f32.load (i32.add (local.get $scales) (i32.shl (local.get $i) (i32.const 2))))
            (f32.convert_i32_s
              (i32.add
                (i32.add (i32x4.extract_lane 0 (local.get $acc)) (i32x4.extract_lane 1 (local.get $acc)))
                (i32.add (i32x4.extract_lane 2 (local.get $acc)) (i32x4.extract_lane 3 (local.get $acc)))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $rows)))))
