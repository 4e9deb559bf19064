// RUN: dit-opt %s -split-input-file -verify-diagnostics
//
// The checks ODS generates from the ops' traits and attribute constraints
// (DitOps.td): attribute ranges (ConfinedAttr, DenseArrayCount), equal
// types (SameOperandsAndResultElementType, SameOperandsAndResultType,
// SameTypeOperands) and inferred result types (InferTypeOpInterface). The
// shape checks the verifiers write by hand are in invalid.mlir.

func.func @patch_count(%x: tensor<1x4x2x4x4xf32>) {
  // expected-error @+1 {{'dit.patch_embed' op attribute 'patch' failed to satisfy constraint: i64 dense array attribute with exactly 3 elements whose value is positive}}
  %0 = dit.patch_embed %x {patch = array<i64: 2, 2>, weight = "p"} : tensor<1x4x2x4x4xf32> -> tensor<1x8x8xf32>
  return
}
// -----
func.func @patch_zero(%x: tensor<1x4x2x4x4xf32>) {
  // expected-error @+1 {{'dit.patch_embed' op attribute 'patch' failed to satisfy constraint: i64 dense array attribute with exactly 3 elements whose value is positive}}
  %0 = dit.patch_embed %x {patch = array<i64: 1, 0, 2>, weight = "p"} : tensor<1x4x2x4x4xf32> -> tensor<1x8x8xf32>
  return
}
// -----
func.func @rope_axes(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.rope' op attribute 'axes_dims' failed to satisfy constraint: i64 dense array attribute with exactly 3 elements}}
  %0 = dit.rope %x {num_heads = 2 : i64, axes_dims = array<i64: 2, 2>, grid = array<i64: 2, 2, 2>, theta = 1.0e+04 : f64, text_tokens = 0 : i64, text_position = #dit<text_position prefix>} : tensor<1x8x8xf32>
  return
}
// -----
func.func @rope_text(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.rope' op attribute 'text_tokens' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = dit.rope %x {num_heads = 2 : i64, axes_dims = array<i64: 2, 1, 1>, grid = array<i64: 2, 2, 2>, theta = 1.0e+04 : f64, text_tokens = -1 : i64, text_position = #dit<text_position prefix>} : tensor<1x8x8xf32>
  return
}
// -----
func.func @linear_types(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.linear' op requires the same element type for all operands and results}}
  %0 = dit.linear %x {weight = "w", bias = true} : tensor<1x8x8xf32> -> tensor<1x8x8xbf16>
  return
}
// -----
func.func @norm_group(%x: tensor<1x8x8xf32>) {
  // expected-error @+1 {{'dit.rms_norm' op attribute 'group_size' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = dit.rms_norm %x {affine = false, eps = 1.0e-06 : f64, group_size = 0 : i64} : tensor<1x8x8xf32>
  return
}
// -----
func.func @adaln_chunks(%c: tensor<1x8xf32>) {
  // expected-error @+1 {{'dit.adaln_modulation' op attribute 'num_chunks' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = dit.adaln_modulation %c {num_chunks = 0 : i64, weight = "m"} : tensor<1x8xf32> -> tensor<1x0x8xf32>
  return
}
// -----
func.func @modulate_shift(%x: tensor<1x8x8xf32>, %p: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'dit.modulate' op attribute 'shift' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = dit.modulate %x, %p {shift = -1 : i64, scale = 1 : i64} : tensor<1x8x8xf32>, tensor<1x2x8xf32>
  return
}
// -----
func.func @concat_types(%t: tensor<1x3x8xf32>, %i: tensor<1x8x8xbf16>) {
  // expected-error @+1 {{'dit.concat_streams' op requires the same element type for all operands and results}}
  %0 = dit.concat_streams %t, %i {text_position = #dit<text_position prefix>} : tensor<1x3x8xf32>, tensor<1x8x8xbf16> -> tensor<1x11x8xf32>
  return
}
// -----
func.func @split_types(%j: tensor<1x11x8xf32>) {
  // expected-error @+1 {{'dit.split_streams' op requires the same element type for all operands and results}}
  %0, %1 = dit.split_streams %j {text_position = #dit<text_position prefix>} : tensor<1x11x8xf32> -> tensor<1x3x8xf32>, tensor<1x8x8xbf16>
  return
}
// -----
func.func @stack_types(%a: tensor<1x4xf32>, %b: tensor<1x5xf32>) {
  // expected-error @+1 {{'dit.stack' op requires all operands to have the same type}}
  %0 = dit.stack %a, %b {axis = 0 : i64} : tensor<1x4xf32>, tensor<1x5xf32> -> tensor<2x1x4xf32>
  return
}
// -----
func.func @stack_axis(%a: tensor<1x4xf32>) {
  // expected-error @+1 {{'dit.stack' op attribute 'axis' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = dit.stack %a {axis = -1 : i64} : tensor<1x4xf32> -> tensor<1x4x1xf32>
  return
}
// -----
func.func @unstack_shape(%a: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'dit.unstack' op inferred type(s) 'tensor<3x4xf32>', 'tensor<3x4xf32>' are incompatible with return type(s) of operation 'tensor<3x4xf32>', 'tensor<4x3xf32>'}}
  // expected-error @+1 {{'dit.unstack' op failed to infer returned types}}
  %0, %1 = dit.unstack %a {axis = 0 : i64} : tensor<2x3x4xf32> -> tensor<3x4xf32>, tensor<4x3xf32>
  return
}
// -----
func.func @select_types(%a: tensor<1x4xf32>, %b: tensor<1x4xbf16>) {
  // expected-error @+1 {{'dit.cfg_select' op requires the same type for all operands and results}}
  %0 = dit.cfg_select %a, %b {slot = 0 : i64, cfg = 1 : i64} : tensor<1x4xf32>, tensor<1x4xbf16> -> tensor<1x4xf32>
  return
}
// -----
func.func @select_cfg(%a: tensor<1x4xf32>) {
  // expected-error @+1 {{'dit.cfg_select' op attribute 'cfg' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = dit.cfg_select %a {slot = 0 : i64, cfg = 0 : i64} : tensor<1x4xf32> -> tensor<1x4xf32>
  return
}
// -----
func.func @unpatchify_grid(%x: tensor<1x8x16xf32>) {
  // expected-error @+1 {{'dit.unpatchify' op attribute 'grid' failed to satisfy constraint: i64 dense array attribute with exactly 3 elements whose value is positive}}
  %0 = dit.unpatchify %x {patch = array<i64: 1, 2, 2>, grid = array<i64: 2, 4>} : tensor<1x8x16xf32> -> tensor<1x4x2x4x4xf32>
  return
}
// -----
func.func @residual_chunk(%x: tensor<1x8x8xf32>, %g: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'dit.residual_add' op attribute 'gate_chunk' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = dit.residual_add %x, %x gate %g[-1] : tensor<1x8x8xf32>, tensor<1x2x8xf32>
  return
}
// -----
func.func @timestep_freq(%t: tensor<1xf32>) {
  // expected-error @+1 {{'dit.timestep_embedding' op attribute 'freq_dim' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = dit.timestep_embedding %t {freq_dim = 0 : i64, weight = "t"} : tensor<1xf32> -> tensor<1x8xf32>
  return
}
