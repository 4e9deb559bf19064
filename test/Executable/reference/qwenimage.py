"""Qwen-Image in float64 NumPy, transcribed from diffusers'
models/transformers/transformer_qwenimage.py (QwenImageTransformer2DModel,
QwenImageTransformerBlock, QwenDoubleStreamAttnProcessor2_0, QwenEmbedRope
with scale_rope, QwenTimestepProjEmbeddings) and
pipelines/qwenimage/pipeline_qwenimage.py (packing, img_shapes, t / 1000).
Independent of ditc's plans: it reads a state dict."""
import numpy as np

from common import (feed_forward, heads, layer_norm, linear, rms_norm,
                    rope_angles, rotate_interleaved, sdpa, silu,
                    timestep_embedding, timestep_features)
from flux import pack_latents, unpack_latents  # the same 2x2 packing

EPS = 1e-6


def rope(cfg, frame, height, width, text_len):
    """QwenEmbedRope(theta=10000, scale_rope=True): the image's (frame,
    row, column) positions with rows and columns centred (the negative half
    from neg_freqs), and text positions max(h/2, w/2) + j on every axis."""
    axes = cfg.get("axes_dims_rope", (16, 56, 56))
    f, r, c = np.meshgrid(np.arange(frame), np.arange(height), np.arange(width), indexing="ij")
    rows = np.concatenate([np.arange(-(height - height // 2), 0), np.arange(height // 2)])
    cols = np.concatenate([np.arange(-(width - width // 2), 0), np.arange(width // 2)])
    image = np.stack([f.ravel(), rows[r.ravel()], cols[c.ravel()]], axis=1)
    start = max(height // 2, width // 2)
    text = np.repeat((start + np.arange(text_len))[:, None], 3, axis=1)
    return rope_angles(image, axes), rope_angles(text, axes)


def modulate(x, params):
    """QwenImageTransformerBlock._modulate: shift, scale, gate."""
    shift, scale, gate = (c[:, None, :] for c in np.split(params, 3, axis=-1))
    return x * (1 + scale) + shift, gate


def block(w, i, cfg, img, txt, temb, img_angles, txt_angles, joint_mask):
    p = f"transformer_blocks.{i}"
    n = cfg["num_attention_heads"]
    img_mod1, img_mod2 = np.split(linear(w, p + ".img_mod.1", silu(temb)), 2, axis=-1)
    txt_mod1, txt_mod2 = np.split(linear(w, p + ".txt_mod.1", silu(temb)), 2, axis=-1)
    hi, img_gate1 = modulate(layer_norm(img, EPS), img_mod1)
    ht, txt_gate1 = modulate(layer_norm(txt, EPS), txt_mod1)
    a = p + ".attn"

    def proj(x, name, norm=None):
        y = heads(linear(w, a + "." + name, x), n)
        return rms_norm(y, w[a + "." + norm + ".weight"], EPS) if norm else y

    qi = rotate_interleaved(proj(hi, "to_q", "norm_q"), img_angles)
    ki = rotate_interleaved(proj(hi, "to_k", "norm_k"), img_angles)
    vi = proj(hi, "to_v")
    qt = rotate_interleaved(proj(ht, "add_q_proj", "norm_added_q"), txt_angles)
    kt = rotate_interleaved(proj(ht, "add_k_proj", "norm_added_k"), txt_angles)
    vt = proj(ht, "add_v_proj")
    o = sdpa(np.concatenate([qt, qi], 1), np.concatenate([kt, ki], 1),
             np.concatenate([vt, vi], 1), joint_mask)
    L = txt.shape[1]
    # The two streams' updates are independent; the image's comes first.
    img = img + img_gate1 * linear(w, a + ".to_out.0", o[:, L:])
    h2, img_gate2 = modulate(layer_norm(img, EPS), img_mod2)
    img = img + img_gate2 * feed_forward(w, p + ".img_mlp", h2)
    if i == cfg["num_layers"] - 1 and a + ".to_add_out.weight" not in w.tensors:
        # diffusers updates the last block's text stream and discards it;
        # weights taken from a plan lack the tensors of that dead update.
        return img, txt
    txt = txt + txt_gate1 * linear(w, a + ".to_add_out", o[:, :L])
    h2, txt_gate2 = modulate(layer_norm(txt, EPS), txt_mod2)
    txt = txt + txt_gate2 * feed_forward(w, p + ".txt_mlp", h2)
    return img, txt


def forward(w, cfg, hidden_states, encoder_hidden_states, timestep, img_shape, mask=None):
    """QwenImageTransformer2DModel.forward (zero_cond_t off): packed tokens
    in and out; `timestep` is the pipeline's t / 1000, which
    Timesteps(scale=1000) multiplies back. `mask` [B, L] is
    encoder_hidden_states_mask: the joint attention mask is [mask ; ones]
    over [text ; image] keys (None: every token valid)."""
    img = linear(w, "img_in", hidden_states)
    t = np.asarray(timestep, dtype=np.float64) * 1000
    temb = timestep_embedding(w, "time_text_embed.timestep_embedder", timestep_features(t))
    txt = rms_norm(encoder_hidden_states, w["txt_norm.weight"], EPS)
    txt = linear(w, "txt_in", txt)
    img_angles, txt_angles = rope(cfg, *img_shape, txt.shape[1])
    joint_mask = None
    if mask is not None:
        joint_mask = np.concatenate([np.asarray(mask) > 0.5,
                                     np.ones(img.shape[:2], dtype=bool)], axis=1)
    for i in range(cfg["num_layers"]):
        img, txt = block(w, i, cfg, img, txt, temb, img_angles, txt_angles, joint_mask)
    scale, shift = (c[:, None, :] for c in np.split(linear(w, "norm_out.linear", silu(temb)), 2, axis=1))
    img = layer_norm(img, EPS) * (1 + scale) + shift
    return linear(w, "proj_out", img)


def velocity(w, cfg, latents, text, sigma, mask=None):
    """The transformer output for latents [B, C, H, W] as QwenImagePipeline
    computes it (one branch; true CFG combines two of these)."""
    b, c, h, wd = latents.shape
    timestep = np.full([b], sigma * 1000.0) / 1000.0
    out = forward(w, cfg, pack_latents(latents), text, timestep, (1, h // 2, wd // 2), mask)
    return unpack_latents(out, h, wd)
