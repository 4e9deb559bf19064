
module attributes {dit.deployment = #dit.deployment<num_gpus = 8, placements = [#dit.placement<component = "transformer", mesh = #dit.mesh<dp = 2, ulysses = 2, tp = 2>, instances = [array<i64: 4, 9223372036854775807, 6, 7>, array<i64: 0, 1, 2, 3>]>]>} {}
