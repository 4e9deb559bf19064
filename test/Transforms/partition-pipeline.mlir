// --dit-partition checks legality first: an illegal mesh stops it.
// RUN: ditc import tiny-wan --height 128 --width 128 --num-frames 5 --dtype f32 -o %t.wan.mlir
// RUN: %add-mesh "ring = 2, kv_gather = 2" %t.wan.mlir | not dit-opt --dit-partition -o /dev/null 2>&1 | FileCheck %s --check-prefix=ILLEGAL
// ILLEGAL: error: [ring-kvgather-exclusive] ring degree 2 and kv_gather degree 2 both fill the row-splitting slot
// A legal mesh goes through all six passes.
// RUN: %add-mesh "pp = 2, cfg = 2, ulysses = 2" %t.wan.mlir | dit-opt --dit-partition 2>/dev/null | FileCheck %s
// CHECK: dit.roles = [@denoise_step_s0_c0, @denoise_step_s0_c1, @denoise_step_s1_c0, @denoise_step_s1_c1]
// The dead text stream of Qwen-Image's last block and its all-reduces are gone.
// RUN: rm -rf %t.qwen && ditc compile qwen-image --height 256 --width 256 --tp-size 2 --attention-backend fa -o %t.qwen
// RUN: not grep -c "transformer_blocks.59.attn.to_add_out" %t.qwen/partitioned.mlir
// RUN: grep -c "transformer_blocks.58.attn.to_add_out" %t.qwen/partitioned.mlir
