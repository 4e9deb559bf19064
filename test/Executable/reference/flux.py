"""FLUX.1 in float64 NumPy, transcribed from diffusers'
models/transformers/transformer_flux.py (FluxTransformer2DModel,
FluxTransformerBlock, FluxSingleTransformerBlock, FluxAttnProcessor,
FluxPosEmbed), normalization.py (AdaLayerNormZero, AdaLayerNormZeroSingle,
AdaLayerNormContinuous), embeddings.py (CombinedTimestep(Guidance)TextProj-
Embeddings) and pipelines/flux/pipeline_flux.py (latent packing, image ids).
Independent of ditc's plans: it reads a state dict."""
import numpy as np

from common import (feed_forward, gelu_tanh, heads, layer_norm, linear,
                    rms_norm, rope_angles, rotate_interleaved, sdpa, silu,
                    text_projection, timestep_embedding, timestep_features)

EPS = 1e-6


def pack_latents(latents):
    """FluxPipeline._pack_latents: [B, C, H, W] -> [B, (H/2)(W/2), C*4],
    features in (c, 2, 2) order."""
    b, c, h, w = latents.shape
    x = latents.reshape(b, c, h // 2, 2, w // 2, 2).transpose(0, 2, 4, 1, 3, 5)
    return x.reshape(b, (h // 2) * (w // 2), c * 4)


def unpack_latents(tokens, h, w):
    """FluxPipeline._unpack_latents for latent height h and width w."""
    b, _, features = tokens.shape
    x = tokens.reshape(b, h // 2, w // 2, features // 4, 2, 2).transpose(0, 3, 1, 4, 2, 5)
    return x.reshape(b, features // 4, h, w)


def latent_image_ids(h, w):
    """FluxPipeline._prepare_latent_image_ids on the packed grid: (0, row, col)."""
    ids = np.zeros((h, w, 3))
    ids[..., 1] += np.arange(h)[:, None]
    ids[..., 2] += np.arange(w)[None, :]
    return ids.reshape(h * w, 3)


def modulation(w, name, temb, chunks):
    """The adaLN linear of SiLU(temb), cut into `chunks` [B, 1, D] pieces."""
    emb = linear(w, name, silu(temb))
    return [c[:, None, :] for c in np.split(emb, chunks, axis=1)]


def joint_attention(w, p, cfg, img, txt, angles):
    """FluxAttnProcessor with encoder states: q/k/v of each stream, per-head
    RMSNorm, text before image, rope on the joined q and k."""
    n = cfg["num_attention_heads"]
    q = rms_norm(heads(linear(w, p + ".to_q", img), n), w[p + ".norm_q.weight"], EPS)
    k = rms_norm(heads(linear(w, p + ".to_k", img), n), w[p + ".norm_k.weight"], EPS)
    v = heads(linear(w, p + ".to_v", img), n)
    if txt is not None:
        qt = rms_norm(heads(linear(w, p + ".add_q_proj", txt), n), w[p + ".norm_added_q.weight"], EPS)
        kt = rms_norm(heads(linear(w, p + ".add_k_proj", txt), n), w[p + ".norm_added_k.weight"], EPS)
        vt = heads(linear(w, p + ".add_v_proj", txt), n)
        q, k, v = (np.concatenate([a, b], axis=1) for a, b in ((qt, q), (kt, k), (vt, v)))
    q = rotate_interleaved(q, angles)
    k = rotate_interleaved(k, angles)
    return sdpa(q, k, v)


def dual_block(w, i, cfg, img, txt, temb, angles):
    p = f"transformer_blocks.{i}"
    shift, scale, gate, shift2, scale2, gate2 = modulation(w, p + ".norm1.linear", temb, 6)
    cshift, cscale, cgate, cshift2, cscale2, cgate2 = modulation(
        w, p + ".norm1_context.linear", temb, 6)
    h = layer_norm(img, EPS) * (1 + scale) + shift
    ht = layer_norm(txt, EPS) * (1 + cscale) + cshift
    o = joint_attention(w, p + ".attn", cfg, h, ht, angles)
    L = txt.shape[1]
    ot, oi = o[:, :L], o[:, L:]
    img = img + gate * linear(w, p + ".attn.to_out.0", oi)
    h = layer_norm(img, EPS) * (1 + scale2) + shift2
    img = img + gate2 * feed_forward(w, p + ".ff", h)
    txt = txt + cgate * linear(w, p + ".attn.to_add_out", ot)
    ht = layer_norm(txt, EPS) * (1 + cscale2) + cshift2
    txt = txt + cgate2 * feed_forward(w, p + ".ff_context", ht)
    return img, txt


def single_block(w, i, cfg, x, temb, angles):
    """FluxSingleTransformerBlock on the joined [text, image] sequence."""
    p = f"single_transformer_blocks.{i}"
    shift, scale, gate = modulation(w, p + ".norm.linear", temb, 3)
    h = layer_norm(x, EPS) * (1 + scale) + shift
    mlp = gelu_tanh(linear(w, p + ".proj_mlp", h))
    o = joint_attention(w, p + ".attn", cfg, h, None, angles)
    return x + gate * linear(w, p + ".proj_out", np.concatenate([o, mlp], axis=2))


def forward(w, cfg, hidden_states, encoder_hidden_states, pooled_projections,
            timestep, img_ids, txt_ids, guidance=None):
    """FluxTransformer2DModel.forward: packed tokens in, packed tokens out.
    `timestep` and `guidance` are what the pipeline passes (t / 1000 and the
    guidance scale); the model multiplies both by 1000."""
    img = linear(w, "x_embedder", hidden_states)
    t = np.asarray(timestep, dtype=np.float64) * 1000
    temb = timestep_embedding(w, "time_text_embed.timestep_embedder", timestep_features(t))
    if cfg.get("guidance_embeds"):
        g = np.asarray(guidance, dtype=np.float64) * 1000
        temb = temb + timestep_embedding(w, "time_text_embed.guidance_embedder",
                                         timestep_features(g))
    temb = temb + text_projection(w, "time_text_embed.text_embedder", pooled_projections)
    txt = linear(w, "context_embedder", encoder_hidden_states)
    axes = cfg.get("axes_dims_rope", (16, 56, 56))
    angles = rope_angles(np.concatenate([txt_ids, img_ids], axis=0), axes)
    for i in range(cfg["num_layers"]):
        img, txt = dual_block(w, i, cfg, img, txt, temb, angles)
    L = txt.shape[1]
    x = np.concatenate([txt, img], axis=1)
    for i in range(cfg["num_single_layers"]):
        x = single_block(w, i, cfg, x, temb, angles)
    img = x[:, L:]
    # AdaLayerNormContinuous: scale first, then shift.
    scale, shift = modulation(w, "norm_out.linear", temb, 2)
    img = layer_norm(img, EPS) * (1 + scale) + shift
    return linear(w, "proj_out", img)


def velocity(w, cfg, latents, text, pooled, sigma, guidance):
    """The transformer output as FluxPipeline computes it for unpacked
    latents [B, C, H, W] at sigma (timestep = sigma * 1000, passed / 1000)."""
    b, c, h, wd = latents.shape
    timestep = np.full([b], sigma * 1000.0) / 1000.0
    out = forward(w, cfg, pack_latents(latents), text, pooled, timestep,
                  latent_image_ids(h // 2, wd // 2), np.zeros((text.shape[1], 3)),
                  np.full([b], guidance))
    return unpack_latents(out, h, wd)
