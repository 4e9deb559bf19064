// Upstream Shard's sharding propagation over the dit ops that implement
// shard::ShardingInterface (linear, norms, rope, modulate, residual_add,
// activation): their loops and indexing maps carry a split of the tokens
// through a block, keep linear's reduction dimension apart from its output
// features, and run backwards from a result.
// RUN: dit-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(sharding-propagation))' | FileCheck %s

shard.grid @grid(shape = 2x2)

// A token split on grid axis 0 flows forwards through every op; the adaLN
// chunk table, whose token dimension no loop of the result reads, stays
// replicated.
// CHECK-LABEL: func.func @tokens
func.func @tokens(%x: tensor<2x8x16xf32>, %mod: tensor<2x6x16xf32>) -> tensor<2x8x32xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<2x8x16xf32>
  // CHECK: %[[NORM:.*]] = dit.rms_norm
  // CHECK: %[[S0:.*]] = shard.sharding @grid split_axes = {{\[\[}}], [0]] : !shard.sharding
  // CHECK-NEXT: shard.shard %[[NORM]] to %[[S0]] : tensor<2x8x16xf32>
  %n = dit.rms_norm %xs {affine = false, eps = 1.0e-06 : f64} : tensor<2x8x16xf32>
  // CHECK: shard.sharding @grid split_axes = {{\[\[}}]] : !shard.sharding
  // CHECK-NEXT: %[[TABLE:.*]] = shard.shard %arg1 to {{.*}} annotate_for_users : tensor<2x6x16xf32>
  // CHECK-NEXT: %[[MOD:.*]] = dit.modulate {{.*}}, %[[TABLE]]
  // CHECK-NEXT: %[[S1:.*]] = shard.sharding @grid split_axes = {{\[\[}}], [0]] : !shard.sharding
  // CHECK-NEXT: shard.shard %[[MOD]] to %[[S1]] : tensor<2x8x16xf32>
  %m = dit.modulate %n, %mod {shift = 0 : i64, scale = 1 : i64} : tensor<2x8x16xf32>, tensor<2x6x16xf32>
  %r = dit.rope %m {num_heads = 2 : i64, axes_dims = array<i64: 4, 2, 2>, grid = array<i64: 2, 2, 2>,
                    theta = 1.0e+04 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>}
      : tensor<2x8x16xf32>
  // CHECK: %[[ROPE:.*]] = dit.rope
  // CHECK-NEXT: %[[S2:.*]] = shard.sharding @grid split_axes = {{\[\[}}], [0]] : !shard.sharding
  // CHECK-NEXT: shard.shard %[[ROPE]] to %[[S2]] : tensor<2x8x16xf32>
  // CHECK: %[[LIN:.*]] = dit.linear
  // CHECK-NEXT: %[[S3:.*]] = shard.sharding @grid split_axes = {{\[\[}}], [0]] : !shard.sharding
  // CHECK-NEXT: shard.shard %[[LIN]] to %[[S3]] : tensor<2x8x32xf32>
  %l = dit.linear %r {weight = "proj", bias = false} : tensor<2x8x16xf32> -> tensor<2x8x32xf32>
  // CHECK: %[[ACT:.*]] = dit.activation gelu
  // CHECK-NEXT: %[[S4:.*]] = shard.sharding @grid split_axes = {{\[\[}}], [0]] : !shard.sharding
  // CHECK-NEXT: shard.shard %[[ACT]] to %[[S4]] : tensor<2x8x32xf32>
  %a = dit.activation gelu %l : tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  return %a : tensor<2x8x32xf32>
}

// -----

shard.grid @grid(shape = 2x2)

// Splitting linear's input features (its reduction loop k) over grid axis 1
// leaves the output features (loop n) whole: k and n are different loops.
// (Upstream does not mark the result partial, as for tosa.matmul.)
// CHECK-LABEL: func.func @row_parallel
// CHECK: %[[IN:.*]] = shard.shard %arg0 to {{.*}} annotate_for_users : tensor<2x8x16xf32>
// CHECK-NEXT: %[[LIN:.*]] = dit.linear %[[IN]]
// CHECK-NEXT: %[[S:.*]] = shard.sharding @grid split_axes = {{\[\[}}]] : !shard.sharding
// CHECK-NEXT: shard.shard %[[LIN]] to %[[S]] : tensor<2x8x32xf32>
func.func @row_parallel(%x: tensor<2x8x16xf32>) -> tensor<2x8x32xf32> {
  %s = shard.sharding @grid split_axes = [[], [], [1]] : !shard.sharding
  %xs = shard.shard %x to %s annotate_for_users : tensor<2x8x16xf32>
  %l = dit.linear %xs {weight = "proj", bias = false} : tensor<2x8x16xf32> -> tensor<2x8x32xf32>
  return %l : tensor<2x8x32xf32>
}

// -----

shard.grid @grid(shape = 2x2)

// Backwards: a tokens x features sharding of a gated residual add's result
// is asked of its residual and branch; the gate table keeps only the
// feature split (its chunk dimension has its own loop).
// CHECK-LABEL: func.func @residual_backwards
// CHECK: %[[S:.*]] = shard.sharding @grid split_axes = {{\[\[}}], [0], [1]] : !shard.sharding
// CHECK-NEXT: %[[X:.*]] = shard.shard %arg0 to %[[S]] annotate_for_users : tensor<2x8x16xf32>
// CHECK: %[[Y:.*]] = shard.shard %arg1 to {{.*}} annotate_for_users : tensor<2x8x16xf32>
// CHECK: %[[T:.*]] = shard.sharding @grid split_axes = {{\[\[}}], [], [1]] : !shard.sharding
// CHECK-NEXT: %[[G:.*]] = shard.shard %arg2 to %[[T]] annotate_for_users : tensor<2x6x16xf32>
// CHECK-NEXT: dit.residual_add %[[X]], %[[Y]] gate %[[G]][2]
func.func @residual_backwards(%x: tensor<2x8x16xf32>, %y: tensor<2x8x16xf32>, %mod: tensor<2x6x16xf32>) -> tensor<2x8x16xf32> {
  %r = dit.residual_add %x, %y gate %mod[2] : tensor<2x8x16xf32>, tensor<2x6x16xf32>
  %s = shard.sharding @grid split_axes = [[], [0], [1]] : !shard.sharding
  %rs = shard.shard %r to %s : tensor<2x8x16xf32>
  return %rs : tensor<2x8x16xf32>
}
