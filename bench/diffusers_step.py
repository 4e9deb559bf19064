#!/usr/bin/env python3
"""diffusers' own transformer, timed per denoising step on the shapes of a
ditc plan: the peer that scripts/gpu-check.sh sets beside dit-run.

It builds the plan's model with diffusers' class from the plan's own
checkpoint config (manifest model.checkpoint_config; random weights, no hub),
on --device in --dtype, and times one step as the pipeline runs it: the
transformer on the guidance branches batched together (as diffusers'
pipelines batch the conditional and unconditional calls), then the CFG
combine and a flow-matching Euler update. Eager, or with torch.compile
(--compile: the default inductor backend; the first calls compile and are
left out with the warm-up).

Prints one JSON line: {"model", "device", "dtype", "compile", "step_ms":
[...], "peak_mib"} where peak_mib is torch.cuda.max_memory_allocated on a GPU
and null on the CPU.

Usage: diffusers_step.py PLAN [--device cuda|cpu] [--dtype bfloat16|float32]
                         [--steps N] [--warmup W] [--compile]
"""
import argparse
import json
import os
import statistics
import sys
import time


def wan_inputs(torch, m, w, batch, dtype, device):
    latents = torch.randn(batch, m["latent_channels"], w["latent_frames"], w["latent_height"],
                          w["latent_width"], dtype=dtype, device=device)
    text = torch.randn(batch, w["text_tokens"], m["text_embed_dim"], dtype=dtype, device=device)
    return latents, lambda x, t: dict(hidden_states=x, timestep=t, encoder_hidden_states=text)


def flux_inputs(torch, m, w, batch, dtype, device):
    h, wd = w["latent_height"], w["latent_width"]
    tokens = (h // 2) * (wd // 2)
    latents = torch.randn(batch, tokens, m["latent_channels"] * 4, dtype=dtype, device=device)
    text = torch.randn(batch, w["text_tokens"], m["text_embed_dim"], dtype=dtype, device=device)
    pooled = torch.randn(batch, m["pooled_dim"], dtype=dtype, device=device)
    img_ids = torch.zeros(h // 2, wd // 2, 3, device=device)
    img_ids[..., 1] += torch.arange(h // 2, device=device)[:, None]
    img_ids[..., 2] += torch.arange(wd // 2, device=device)[None, :]
    img_ids = img_ids.reshape(tokens, 3).to(dtype)
    txt_ids = torch.zeros(w["text_tokens"], 3, dtype=dtype, device=device)
    guidance = (torch.full([batch], w["guidance_scale"], dtype=torch.float32, device=device)
                if m.get("guidance_embeds") else None)
    return latents, lambda x, t: dict(hidden_states=x, timestep=t / 1000,
                                      encoder_hidden_states=text, pooled_projections=pooled,
                                      img_ids=img_ids, txt_ids=txt_ids, guidance=guidance)


ADAPTERS = {"wan": wan_inputs, "flux": flux_inputs}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plan")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--compile", action="store_true")
    args = parser.parse_args()

    import diffusers
    import torch
    manifest = json.load(open(os.path.join(args.plan, "manifest.json")))
    m, w = manifest["model"], manifest["workload"]
    if m["family"] not in ADAPTERS:
        sys.exit(f"diffusers_step.py: no input adapter for family {m['family']} "
                 f"(known: {', '.join(sorted(ADAPTERS))})")
    dtype = getattr(torch, args.dtype)
    device = torch.device(args.device)
    config = dict(m["checkpoint_config"]["transformer"])
    model = getattr(diffusers, m["class_name"]).from_config(config).eval()
    # What from_pretrained(torch_dtype=...) does: the class's float32-kept
    # modules (Wan's norms and time embedder) stay float32.
    keep = getattr(model, "_keep_in_fp32_modules", None) or []
    for name, parameter in model.named_parameters():
        kept = any(k in name.split(".") for k in keep)
        parameter.data = parameter.data.to(device, torch.float32 if kept else dtype)
    for name, buffer in model.named_buffers():
        buffer.data = buffer.data.to(device)
    call = torch.compile(model) if args.compile else model
    batch = w["batch"] * w["branches"]
    latents, inputs = ADAPTERS[m["family"]](torch, m, w, batch, dtype, device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    times = []
    with torch.no_grad():
        x = latents
        for step in range(args.warmup + args.steps):
            sync()
            start = time.perf_counter()
            t = torch.full([batch], 1000.0 * (1 - step / (args.warmup + args.steps)),
                           dtype=torch.float32, device=device)
            v = call(**inputs(x, t), return_dict=False)[0]
            if w["branches"] > 1:
                cond, uncond = v.chunk(2)
                v = (uncond + w["guidance_scale"] * (cond - uncond)).repeat(2, *[1] * (v.dim() - 1))
            x = x + (-1.0 / (args.warmup + args.steps)) * v
            sync()
            if step >= args.warmup:
                times.append((time.perf_counter() - start) * 1000.0)
    peak = torch.cuda.max_memory_allocated() / 2**20 if device.type == "cuda" else None
    print(json.dumps({"model": m["name"], "device": args.device, "dtype": args.dtype,
                      "compile": args.compile, "step_ms": times,
                      "median_ms": statistics.median(times), "peak_mib": peak}))


if __name__ == "__main__":
    main()
