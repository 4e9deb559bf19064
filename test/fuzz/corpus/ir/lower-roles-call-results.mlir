module attributes {dit.groups = #dit.groups<dp = [[0], [1], [2], [3]], cfg = [[0], [1], [2], [3]], pp = [[0, 2], [1, 3]], ring = [[0], [1], [2], [3]], kv_gather = [[0], [1], [2], [3]], ulysses = [[0], [1], [2], [3]], tp = [[0, 1], [2, 3]]>, dit.mesh = #dit.mesh<pp = 2, tp = 2>, dit.mesh_axes = #dit.axes<[dp, cfg, pp, ring, kv_gather, ulysses, tp]>, dit.model = #dit.model<family = "wan", class_name = "WanTransformer3DModel", double_blocks = 0, single_blocks = 2, num_heads = 4, head_dim = 8, hidden_size = 32, ffn_size = 64, text_hidden_size = 32, text_embed_dim = 16, in_channels = 4, out_channels = 4, patch = [1, 2, 2], vae_spatial = 8, vae_temporal = 4, seq_align = 1, experts = 1>, dit.workload = #dit.workload<batch = 1, height = 128, width = 128, frames = 5, latent_frames = 2, latent_height = 16, latent_width = 16, image_tokens = 128, text_tokens = 512, branches = 2, guidance_scale = 5.000000e+00 : f64, steps = 50>} {
  shard.grid @mesh(shape = 1x1x2x1x1x1x2)
  func.func @text_encoder() -> tensor<1x512x16xf32> attributes {dit.component = #dit.component<text_encoder>} {
    %0 = dit.component text_encoder "UMT5EncoderModel" : () -> tensor<1x512x16xf32>
    return %0 : tensor<1x512x16xf32>
  }
  func.func @transformer(%arg0: tensor<1x128x16xf32> {dit.input = "latents"}, %arg1: tensor<1xf32> {dit.input = "timestep"}, %arg2: tensor<1x512x16xf32> {dit.input = "text"}) -> tensor<1x128x16xf32> attributes {dit.component = #dit.component<transformer>} {
    %0 = dit.patch_embed %arg0 {dit.sharding = [#dit.sharding<dims = [[], [], []]>], kernel = #dit<patch_kernel conv3d>, patch = array<i64: 1, 2, 2>, weight = "patch_embedding"} : tensor<1x128x16xf32> -> tensor<1x128x32xf32>
    %1 = dit.timestep_embedding %arg1 {dit.sharding = [#dit.sharding<dims = [[], []]>], freq_dim = 16 : i64, weight = "condition_embedder.time_embedder"} : tensor<1xf32> -> tensor<1x32xf32>
    %2 = dit.linear %arg2 {bias = true, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "condition_embedder.text_embedder.linear_1"} : tensor<1x512x16xf32> -> tensor<1x512x16xf32>
    %3 = dit.activation gelu_tanh %2 {dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>]} : tensor<1x512x16xf32> -> tensor<1x512x16xf32>
    %4 = dit.linear %3 {bias = true, dit.sharding = [#dit.sharding<dims = [[], [], []], partial = [tp]>], dit.tp = #dit.tp_role<row>, weight = "condition_embedder.text_embedder.linear_2"} : tensor<1x512x16xf32> -> tensor<1x512x32xf32>
    %all_reduce = shard.all_reduce %4 on @mesh grid_axes = [6] : tensor<1x512x32xf32> -> tensor<1x512x32xf32>
    %5 = dit.activation silu %1 {dit.sharding = [#dit.sharding<dims = [[], []]>]} : tensor<1x32xf32> -> tensor<1x32xf32>
    %6 = dit.linear %5 {bias = true, dit.sharding = [#dit.sharding<dims = [[], []]>], weight = "condition_embedder.time_proj"} : tensor<1x32xf32> -> tensor<1x192xf32>
    %7 = dit.adaln_modulation %6 {dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>], num_chunks = 6 : i64, table, weight = "blocks.0.scale_shift_table"} : tensor<1x192xf32> -> tensor<1x6x32xf32>
    %8 = dit.layer_norm %0 {affine = false, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>], eps = 9.9999999999999995E-7 : f64} : tensor<1x128x32xf32>
    %9 = dit.modulate %8, %7 {dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>], scale = 1 : i64, shift = 0 : i64} : tensor<1x128x32xf32>, tensor<1x6x32xf32>
    %10 = dit.linear %9 {bias = true, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.0.attn1.to_q"} : tensor<1x128x32xf32> -> tensor<1x128x16xf32>
    %11 = dit.rms_norm %10 {affine = true, dit.block = 0 : i64, dit.reduce_stats_over = #dit.axes<[tp]>, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], eps = 9.9999999999999995E-7 : f64, weight = "blocks.0.attn1.norm_q"} : tensor<1x128x16xf32>
    %12 = dit.linear %9 {bias = true, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.0.attn1.to_k"} : tensor<1x128x32xf32> -> tensor<1x128x16xf32>
    %13 = dit.rms_norm %12 {affine = true, dit.block = 0 : i64, dit.reduce_stats_over = #dit.axes<[tp]>, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], eps = 9.9999999999999995E-7 : f64, weight = "blocks.0.attn1.norm_k"} : tensor<1x128x16xf32>
    %14 = dit.linear %9 {bias = true, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.0.attn1.to_v"} : tensor<1x128x32xf32> -> tensor<1x128x16xf32>
    %15 = dit.rope %13 {axes_dims = array<i64: 4, 2, 2>, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], grid = array<i64: 2, 8, 8>, num_heads = 2 : i64, text_position = #dit<text_position prefix>, text_tokens = 0 : i64, theta = 1.000000e+04 : f64} : tensor<1x128x16xf32>
    %16 = dit.rope %11 {axes_dims = array<i64: 4, 2, 2>, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], grid = array<i64: 2, 8, 8>, num_heads = 2 : i64, text_position = #dit<text_position prefix>, text_tokens = 0 : i64, theta = 1.000000e+04 : f64} : tensor<1x128x16xf32>
    %17 = dit.attention self %16, %15, %14 {dit.attention_plan = #dit.attention_plan<heads = [tp], rows = none>, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], head_dim = 8 : i64, num_heads = 2 : i64} : tensor<1x128x16xf32>, tensor<1x128x16xf32>, tensor<1x128x16xf32> -> tensor<1x128x16xf32>
    %18 = dit.linear %17 {bias = true, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []], partial = [tp]>], dit.tp = #dit.tp_role<row>, weight = "blocks.0.attn1.to_out.0"} : tensor<1x128x16xf32> -> tensor<1x128x32xf32>
    %all_reduce_0 = shard.all_reduce %18 on @mesh grid_axes = [6] : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
    %19 = dit.residual_add %0, %all_reduce_0 gate %7[2] {dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>]} : tensor<1x128x32xf32>, tensor<1x6x32xf32>
    %20 = dit.layer_norm %19 {affine = true, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>], eps = 9.9999999999999995E-7 : f64, weight = "blocks.0.norm2"} : tensor<1x128x32xf32>
    %21 = dit.linear %20 {bias = true, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.0.attn2.to_q"} : tensor<1x128x32xf32> -> tensor<1x128x16xf32>
    %22 = dit.rms_norm %21 {affine = true, dit.block = 0 : i64, dit.reduce_stats_over = #dit.axes<[tp]>, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], eps = 9.9999999999999995E-7 : f64, weight = "blocks.0.attn2.norm_q"} : tensor<1x128x16xf32>
    %23 = dit.linear %all_reduce {bias = true, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.0.attn2.to_k"} : tensor<1x512x32xf32> -> tensor<1x512x16xf32>
    %24 = dit.rms_norm %23 {affine = true, dit.block = 0 : i64, dit.reduce_stats_over = #dit.axes<[tp]>, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], eps = 9.9999999999999995E-7 : f64, weight = "blocks.0.attn2.norm_k"} : tensor<1x512x16xf32>
    %25 = dit.linear %all_reduce {bias = true, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.0.attn2.to_v"} : tensor<1x512x32xf32> -> tensor<1x512x16xf32>
    %26 = dit.attention cross %22, %24, %25 {dit.attention_plan = #dit.attention_plan<heads = [tp], rows = local>, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], head_dim = 8 : i64, num_heads = 2 : i64} : tensor<1x128x16xf32>, tensor<1x512x16xf32>, tensor<1x512x16xf32> -> tensor<1x128x16xf32>
    %27 = dit.linear %26 {bias = true, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []], partial = [tp]>], dit.tp = #dit.tp_role<row>, weight = "blocks.0.attn2.to_out.0"} : tensor<1x128x16xf32> -> tensor<1x128x32xf32>
    %all_reduce_1 = shard.all_reduce %27 on @mesh grid_axes = [6] : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
    %28 = dit.residual_add %19, %all_reduce_1 {dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>]} : tensor<1x128x32xf32>
    %29 = dit.layer_norm %28 {affine = false, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>], eps = 9.9999999999999995E-7 : f64} : tensor<1x128x32xf32>
    %30 = dit.modulate %29, %7 {dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>], scale = 4 : i64, shift = 3 : i64} : tensor<1x128x32xf32>, tensor<1x6x32xf32>
    %31 = dit.linear %30 {bias = true, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.0.ffn.net.0.proj"} : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
    %32 = dit.activation gelu_tanh %31 {dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>]} : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
    %33 = dit.linear %32 {bias = true, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []], partial = [tp]>], dit.tp = #dit.tp_role<row>, weight = "blocks.0.ffn.net.2"} : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
    %all_reduce_2 = shard.all_reduce %33 on @mesh grid_axes = [6] : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
    %34 = dit.residual_add %28, %all_reduce_2 gate %7[5] {dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>]} : tensor<1x128x32xf32>, tensor<1x6x32xf32>
    %35 = dit.adaln_modulation %6 {dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>], num_chunks = 6 : i64, table, weight = "blocks.1.scale_shift_table"} : tensor<1x192xf32> -> tensor<1x6x32xf32>
    %36 = dit.layer_norm %34 {affine = false, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>], eps = 9.9999999999999995E-7 : f64} : tensor<1x128x32xf32>
    %37 = dit.modulate %36, %35 {dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>], scale = 1 : i64, shift = 0 : i64} : tensor<1x128x32xf32>, tensor<1x6x32xf32>
    %38 = dit.linear %37 {bias = true, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.1.attn1.to_q"} : tensor<1x128x32xf32> -> tensor<1x128x16xf32>
    %39 = dit.rms_norm %38 {affine = true, dit.block = 1 : i64, dit.reduce_stats_over = #dit.axes<[tp]>, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], eps = 9.9999999999999995E-7 : f64, weight = "blocks.1.attn1.norm_q"} : tensor<1x128x16xf32>
    %40 = dit.linear %37 {bias = true, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.1.attn1.to_k"} : tensor<1x128x32xf32> -> tensor<1x128x16xf32>
    %41 = dit.rms_norm %40 {affine = true, dit.block = 1 : i64, dit.reduce_stats_over = #dit.axes<[tp]>, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], eps = 9.9999999999999995E-7 : f64, weight = "blocks.1.attn1.norm_k"} : tensor<1x128x16xf32>
    %42 = dit.linear %37 {bias = true, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.1.attn1.to_v"} : tensor<1x128x32xf32> -> tensor<1x128x16xf32>
    %43 = dit.rope %41 {axes_dims = array<i64: 4, 2, 2>, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], grid = array<i64: 2, 8, 8>, num_heads = 2 : i64, text_position = #dit<text_position prefix>, text_tokens = 0 : i64, theta = 1.000000e+04 : f64} : tensor<1x128x16xf32>
    %44 = dit.rope %39 {axes_dims = array<i64: 4, 2, 2>, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], grid = array<i64: 2, 8, 8>, num_heads = 2 : i64, text_position = #dit<text_position prefix>, text_tokens = 0 : i64, theta = 1.000000e+04 : f64} : tensor<1x128x16xf32>
    %45 = dit.attention self %44, %43, %42 {dit.attention_plan = #dit.attention_plan<heads = [tp], rows = none>, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], head_dim = 8 : i64, num_heads = 2 : i64} : tensor<1x128x16xf32>, tensor<1x128x16xf32>, tensor<1x128x16xf32> -> tensor<1x128x16xf32>
    %46 = dit.linear %45 {bias = true, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []], partial = [tp]>], dit.tp = #dit.tp_role<row>, weight = "blocks.1.attn1.to_out.0"} : tensor<1x128x16xf32> -> tensor<1x128x32xf32>
    %all_reduce_3 = shard.all_reduce %46 on @mesh grid_axes = [6] : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
    %47 = dit.residual_add %34, %all_reduce_3 gate %35[2] {dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>]} : tensor<1x128x32xf32>, tensor<1x6x32xf32>
    %48 = dit.layer_norm %47 {affine = true, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>], eps = 9.9999999999999995E-7 : f64, weight = "blocks.1.norm2"} : tensor<1x128x32xf32>
    %49 = dit.linear %48 {bias = true, dit.block = 0 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.1.attn2.to_q"} : tensor<1x128x32xf32> -> tensor<1x128x16xf32>
    %50 = dit.rms_norm %49 {affine = true, dit.block = 1 : i64, dit.reduce_stats_over = #dit.axes<[tp]>, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], eps = 9.9999999999999995E-7 : f64, weight = "blocks.1.attn2.norm_q"} : tensor<1x128x16xf32>
    %51 = dit.linear %all_reduce {bias = true, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.1.attn2.to_k"} : tensor<1x512x32xf32> -> tensor<1x512x16xf32>
    %52 = dit.rms_norm %51 {affine = true, dit.block = 1 : i64, dit.reduce_stats_over = #dit.axes<[tp]>, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], eps = 9.9999999999999995E-7 : f64, weight = "blocks.1.attn2.norm_k"} : tensor<1x512x16xf32>
    %53 = dit.linear %all_reduce {bias = true, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.1.attn2.to_v"} : tensor<1x512x32xf32> -> tensor<1x512x16xf32>
    %54 = dit.attention cross %50, %52, %53 {dit.attention_plan = #dit.attention_plan<heads = [tp], rows = local>, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], head_dim = 8 : i64, num_heads = 2 : i64} : tensor<1x128x16xf32>, tensor<1x512x16xf32>, tensor<1x512x16xf32> -> tensor<1x128x16xf32>
    %55 = dit.linear %54 {bias = true, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []], partial = [tp]>], dit.tp = #dit.tp_role<row>, weight = "blocks.1.attn2.to_out.0"} : tensor<1x128x16xf32> -> tensor<1x128x32xf32>
    %all_reduce_4 = shard.all_reduce %55 on @mesh grid_axes = [6] : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
    %56 = dit.residual_add %47, %all_reduce_4 {dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>]} : tensor<1x128x32xf32>
    %57 = dit.layer_norm %56 {affine = false, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>], eps = 9.9999999999999995E-7 : f64} : tensor<1x128x32xf32>
    %58 = dit.modulate %57, %35 {dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>], scale = 4 : i64, shift = 3 : i64} : tensor<1x128x32xf32>, tensor<1x6x32xf32>
    %59 = dit.linear %58 {bias = true, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>], dit.tp = #dit.tp_role<column>, weight = "blocks.1.ffn.net.0.proj"} : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
    %60 = dit.activation gelu_tanh %59 {dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], [tp]]>]} : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
    %61 = dit.linear %60 {bias = true, dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []], partial = [tp]>], dit.tp = #dit.tp_role<row>, weight = "blocks.1.ffn.net.2"} : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
    %all_reduce_5 = shard.all_reduce %61 on @mesh grid_axes = [6] : tensor<1x128x32xf32> -> tensor<1x128x32xf32>
    %62 = dit.residual_add %56, %all_reduce_5 gate %35[5] {dit.block = 1 : i64, dit.sharding = [#dit.sharding<dims = [[], [], []]>]} : tensor<1x128x32xf32>, tensor<1x6x32xf32>
    %63 = dit.adaln_modulation %1 {dit.sharding = [#dit.sharding<dims = [[], [], []]>], num_chunks = 2 : i64, table, weight = "scale_shift_table"} : tensor<1x32xf32> -> tensor<1x2x32xf32>
    %64 = dit.layer_norm %62 {affine = false, dit.sharding = [#dit.sharding<dims = [[], [], []]>], eps = 9.9999999999999995E-7 : f64} : tensor<1x128x32xf32>
    %65 = dit.modulate %64, %63 {dit.sharding = [#dit.sharding<dims = [[], [], []]>], scale = 1 : i64, shift = 0 : i64} : tensor<1x128x32xf32>, tensor<1x2x32xf32>
    %66 = dit.linear %65 {bias = true, dit.sharding = [#dit.sharding<dims = [[], [], []]>], weight = "proj_out"} : tensor<1x128x32xf32> -> tensor<1x128x16xf32>
    return %66 : tensor<1x128x16xf32>
  }
  func.func @denoise_step(%arg0: tensor<1x128x16xf32> {dit.input = "latents"}, %arg1: tensor<1xf32> {dit.input = "timestep"}, %arg2: tensor<f32> {dit.input = "sigma"}, %arg3: tensor<f32> {dit.input = "sigma_next"}, %arg4: tensor<1x512x16xf32> {dit.branch = 0 : i64, dit.input = "text"}, %arg5: tensor<1x512x16xf32> {dit.branch = 1 : i64, dit.input = "text"}) -> tensor<1x128x16xf32> attributes {dit.component = #dit.component<denoise_step>} {
    %0 = call @transformer(%arg0, %arg1, %arg4) : (tensor<1x128x16xf32>, tensor<1xf32>, tensor<1x512x16xf32>) -> tensor<1x128x16xf32>
    %1 = call @transformer(%arg0, %arg1, %arg5) : (tensor<1x128x16xf32>, tensor<1xf32>, tensor<1x512x16xf32>) -> tensor<1x128x16xf32>
    %2 = dit.cfg_combine %0, %1 {guidance_scales = [5.000000e+00]} : tensor<1x128x16xf32>, tensor<1x128x16xf32> -> tensor<1x128x16xf32>
    %3 = dit.scheduler_step flow_match_euler %arg0, %2, %arg2, %arg3 : tensor<1x128x16xf32>, tensor<f32>
    return %3 : tensor<1x128x16xf32>
  }
  func.func @vae_decode(%arg0: tensor<1x4x2x16x16xf32>) -> tensor<1x3x5x128x128xf32> attributes {dit.component = #dit.component<vae>} {
    %0 = dit.component vae_decoder "AutoencoderKLWan"(%arg0) : (tensor<1x4x2x16x16xf32>) -> tensor<1x3x5x128x128xf32>
    return %0 : tensor<1x3x5x128x128xf32>
  }
}

