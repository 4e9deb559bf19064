// --dit-partition checks legality first: an illegal mesh stops it.
// RUN: ditc import tiny-wan --height 128 --width 128 --num-frames 5 --dtype f32 -o %t.wan.mlir
// RUN: not dit-opt %t.wan.mlir --dit-partition="degrees=ring=2,kv_gather=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ILLEGAL
// ILLEGAL: error: [ring-kvgather-exclusive] ring degree 2 and kv_gather degree 2 both fill the row-splitting slot
// A legal mesh goes through all six passes.
// RUN: dit-opt %t.wan.mlir --dit-partition="degrees=pp=2,cfg=2,ulysses=2" 2>/dev/null | FileCheck %s
// CHECK-LABEL: module attributes
// CHECK-SAME: dit.roles = [@denoise_step_s0_c0, @denoise_step_s0_c1, @denoise_step_s1_c0, @denoise_step_s1_c1]
// Pipeline options: check-legality=false skips the rules (the partitioner
// then refuses the mesh itself), and mesh-order is a list of mesh axes.
// RUN: not dit-opt %t.wan.mlir --dit-partition="degrees=ring=2,kv_gather=2 check-legality=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOCHECK
// NOCHECK-NOT: [ring-kvgather-exclusive]
// NOCHECK: error: ring 2 and kv_gather 2 both split rows; the partitioner supports one
// RUN: dit-opt %t.wan.mlir --dit-partition="degrees=pp=2,cfg=2,ulysses=2 mesh-order=tp,ulysses,ring,kv_gather,pp,cfg,dp" 2>/dev/null | FileCheck %s --check-prefix=ORDER
// ORDER-LABEL: module attributes
// ORDER-SAME: dit.mesh_axes = #dit.axes<[tp, ulysses, ring, kv_gather, pp, cfg, dp]>
// ORDER: shard.grid @mesh(shape = 1x2x1x1x2x2x1)
// RUN: not dit-opt %t.wan.mlir --dit-partition="degrees=cfg=2 mesh-order=tp,sp" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: mesh-order option: 'sp' is not a mesh axis; expected dp, cfg, pp, ring, kv_gather, ulysses or tp
// Given empty, mesh-order is an error, not the deployment's order; so is an
// option the pipeline does not have (both used to exit 1 saying no error).
// RUN: not dit-opt %t.wan.mlir --dit-partition="mesh-order=" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not dit-opt %t.wan.mlir --dit-mesh-layout="mesh-order=" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: mesh-order option is empty; expected a permutation of dp, cfg, pp, ring, kv_gather, ulysses, tp (leave the option out to keep the deployment's order)
// RUN: not dit-opt %t.wan.mlir --dit-partition="mesh-orde=tp" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSUCH
// NOSUCH: error: <Pass-Options-Parser>: no such option mesh-orde
// RUN: not dit-opt %t.wan.mlir --dit-partition="degrees=cfg=2 mesh-order=tp,dp" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: error: mesh-order option names 2 axes; expected a permutation of dp, cfg, pp, ring, kv_gather, ulysses, tp
// The dead text stream of Qwen-Image's last block and its all-reduces are gone.
// RUN: rm -rf %t.qwen && ditc compile qwen-image --height 256 --width 256 --tp-size 2 --attention-backend fa -o %t.qwen
// RUN: not grep -c "transformer_blocks.59.attn.to_add_out" %t.qwen/partitioned.mlir
// RUN: grep -c "transformer_blocks.58.attn.to_add_out" %t.qwen/partitioned.mlir
