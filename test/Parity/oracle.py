#!/usr/bin/env python3
"""dit-run against diffusers and transformers themselves: the references
users trust, run on the same pipeline folder and the same inputs.

For each family it makes a tiny pipeline folder with diffusers' and
transformers' own classes (the bundled model's configs, shrunk as
test/Runtime/families.py shrinks them; weights drawn from a seeded torch
generator; written by save_pretrained, never loaded from a hub), then runs
each stage twice, with dit-run (one rank, float32) and with diffusers
(float32, on the CPU), and compares:

  transformer  the denoising loop with the pipeline's scheduler: dit-run
               --weights FOLDER --latents --text-embeds (the scheduler from
               FOLDER/scheduler) against the diffusers pipeline called with
               the same latents and embeddings and output_type="latent";
  vae          dit-run --decode-only against the VAE's decode, as the
               pipeline scales the latents and converts the pixels;
  text         dit-run --prompt --save-text-embeds against the pipeline's
               encode_prompt;
  pipeline     a prompt to pixels: dit-run --prompt --save-pixels against the
               whole pipeline with output_type="np".

Each comparison prints one line,
  <family> <stage>: max relative error E (tolerance T): ok
and appends a JSON row {family, stage, axis, error, tolerance} to --rows.
The error is max |a - b| / max |b| over the stage's output. Tolerances: 1e-5
per stage, 1e-4 for a whole pipeline (the issue's bands).

Usage: oracle.py --ditc D --dit-run R --workdir W [--rows FILE]
                 [--only FAMILY ...] [--stages transformer,vae,...]
       oracle.py table ROWS... > docs/parity.md
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Runtime"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Text"))
import families as shrink_table  # noqa: E402  the shrink edits of each family
import schedulers as published  # noqa: E402  the published scheduler configs

STAGE_TOLERANCE = 1e-5
PIPELINE_TOLERANCE = 1e-4
SEED = 0
STEPS = 3
TEXT_TOKENS = 16


def shrink_entry(model):
    for entry in shrink_table.MODELS:
        if entry[0] == model:
            return entry
    sys.exit(f"oracle.py: families.py has no shrink for {model}")


def edits_of(model):
    return shrink_entry(model)[1]


def axes_of(model):
    """The 2-rank configurations families.py runs for `model`: {name:
    ditc flags}."""
    axes = {}
    for config in shrink_entry(model)[3]:
        name, _, flags = config.partition("=")
        axes[name] = shlex.split(flags.split(":")[0])
    return axes


def relative_error(ours, reference):
    ours = np.asarray(ours, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    if ours.shape != reference.shape:
        raise Failed(f"shapes differ: dit-run {ours.shape}, diffusers {reference.shape}")
    return float(np.abs(ours - reference).max() / max(np.abs(reference).max(), 1e-30))


class Failed(Exception):
    pass


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise Failed(f"exit {result.returncode}: {shlex.join(cmd)}\n{result.stderr.strip()}")
    return result


def randomize(module, seed):
    """Draws every parameter of `module` from a seeded generator, in name
    order: weights of two or more dimensions ~ N(0, 1/fan_in) (the scale of
    torch's default init, so activations stay O(1)), norm scales 1 + N(0,
    0.1^2), everything else N(0, 0.1^2). diffusers zero-initialises some
    layers (adaLN outputs, final projections); drawing them all makes every
    weight count in the comparison."""
    import torch
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in sorted(module.named_parameters()):
            noise = torch.randn(parameter.shape, generator=generator, dtype=torch.float64)
            if parameter.dim() >= 2:
                fan_in = parameter[0].numel()
                value = noise / np.sqrt(fan_in)
            elif name.endswith("weight") and "norm" in name:
                value = 1.0 + 0.1 * noise
            else:
                value = 0.1 * noise
            parameter.copy_(value.to(parameter.dtype))
    return module


# --- Families ------------------------------------------------------------------
#
# Each family names its bundled model (whose configs families.py shrinks),
# its workload, its published scheduler config, and how its diffusers
# pipeline takes dit-run's inputs: dit-run's latents are [B, C, F, H, W]
# for every family; the pipelines pack them their own way. Families whose
# prompt dit-run encodes also name a whole tiny pipeline (the text, vae and
# pipeline stages): a bundled tiny transformer config, a tiny VAE config
# and text_check.py's tokenizers and encoder configs.


def tensor(x):
    import torch
    return torch.from_numpy(np.ascontiguousarray(x))


def diffusers_class(name):
    import diffusers
    return getattr(diffusers, name)


def save_diffusers_model(config_path, folder, seed):
    """The diffusers model of `config_path`, drawn from `seed`, saved into
    `folder` by save_pretrained."""
    config = json.load(open(config_path))
    model = randomize(diffusers_class(config["_class_name"]).from_config(config), seed)
    model.save_pretrained(folder)


def save_transformers_encoder(folder, seed):
    """Replaces the text encoder in `folder` (text_check.py's config.json) by
    transformers' own class of that config, drawn from `seed`."""
    import transformers
    config = json.load(open(os.path.join(folder, "config.json")))
    model_class = getattr(transformers, config["architectures"][0])
    model = model_class(transformers.AutoConfig.from_pretrained(folder))
    randomize(model, seed)
    for name in os.listdir(folder):
        if name.endswith(".safetensors") or name.endswith(".json"):
            os.remove(os.path.join(folder, name))
    model.save_pretrained(folder)


PROMPT = "a photo of a cat sitting on a red chair"
NEGATIVE = "blurry"


class Family:
    model = None            # the bundled model whose configs are shrunk
    text_tokens = TEXT_TOKENS
    workload = []
    scheduler = None
    pipeline_name = None    # diffusers' pipeline class
    absent = ()             # its components the transformer stage leaves out
    # The VAE stage: its config and the bundled tiny transformer it sits
    # beside, for ditc compile.
    vae_config = None
    vae_transformer = None
    # The text and pipeline stages: the tiny transformer, its VAE config and
    # text_check.py's family.
    tiny = None
    text_family = None

    def __init__(self, workdir):
        self.folder = os.path.join(workdir, self.model)
        self.workdir = workdir

    def pipeline_class(self):
        return diffusers_class(self.pipeline_name)

    def make(self):
        """The transformer stage's folder: configs shrunk, the transformer
        made and saved by diffusers, the scheduler saved by its class."""
        shrink_table.shrink(os.path.join(ROOT, "models", self.model), self.folder,
                            edits_of(self.model))
        for part in ("transformer", "transformer_2"):
            config_path = os.path.join(self.folder, part, "config.json")
            if os.path.exists(config_path):
                save_diffusers_model(config_path, os.path.join(self.folder, part),
                                     SEED + (part == "transformer_2"))
        self.save_scheduler(self.folder)

    def save_scheduler(self, folder):
        config = dict(self.scheduler)
        scheduler = diffusers_class(config.pop("_class_name")).from_config(config)
        scheduler.save_pretrained(os.path.join(folder, "scheduler"))

    def compile(self, folder, plan, flags=()):
        shutil.rmtree(plan, ignore_errors=True)
        run([ARGS.ditc, "compile", folder, *self.workload, "--dtype", "f32",
             "--text-tokens", str(self.text_tokens), *flags, "-o", plan])
        return json.load(open(os.path.join(plan, "manifest.json")))

    def inputs(self, manifest, where):
        """Seeded latents [B, C, F, H, W], text [branches, B, T, E] and
        pooled text [branches, B, P] (where the model takes one), as .npy
        files dit-run reads."""
        w = manifest["workload"]
        m = manifest["model"]
        rng = np.random.default_rng(SEED)
        files = {"latents": rng.standard_normal(
            [w["batch"], m["latent_channels"], w["latent_frames"], w["latent_height"],
             w["latent_width"]]).astype(np.float32)}
        files["text-embeds"] = rng.standard_normal(
            [w["branches"], w["batch"], w["text_tokens"], m["text_embed_dim"]]).astype(np.float32)
        if m.get("pooled_dim"):
            files["pooled-embeds"] = rng.standard_normal(
                [w["branches"], w["batch"], m["pooled_dim"]]).astype(np.float32)
        paths = {}
        for flag, value in files.items():
            paths[flag] = os.path.join(where, f"{self.model}.{flag}.npy")
            np.save(paths[flag], value)
        return files, paths

    def pipeline(self, folder=None, **components):
        """diffusers' pipeline over `folder`'s transformer and scheduler, with
        `components` for the rest (the transformer stage gives None for
        each of `absent`)."""
        import torch
        folder = folder or self.folder
        parts = dict(components)
        for part in ("transformer", "transformer_2"):
            if os.path.exists(os.path.join(folder, part, "diffusion_pytorch_model.safetensors")):
                config = json.load(open(os.path.join(folder, part, "config.json")))
                parts[part] = diffusers_class(config["_class_name"]).from_pretrained(
                    os.path.join(folder, part))
        parts["scheduler"] = diffusers_class(self.scheduler["_class_name"]).from_pretrained(
            os.path.join(folder, "scheduler"))
        pipe = self.pipeline_class()(**parts)
        pipe.set_progress_bar_config(disable=True)
        torch.set_grad_enabled(False)
        return pipe

    # --- the transformer's step loop with its scheduler ---

    def transformer_stage(self, scheduler_shift=None):
        """{axis: error}: the one-rank run and each of families.py's 2-rank
        configurations of the model, each against diffusers."""
        pipe = self.pipeline(**{name: None for name in self.absent})
        errors = {}
        reference = None
        axes = {"one rank": []} if scheduler_shift else dict({"one rank": []},
                                                             **axes_of(self.model))
        for axis, compile_flags in axes.items():
            label = self.model + "." + axis.replace(" ", "-")
            plan = os.path.join(self.workdir, label + ".plan")
            manifest = self.compile(self.folder, plan, compile_flags)
            values, paths = self.inputs(manifest, self.workdir)
            out = os.path.join(self.workdir, label + ".out.npy")
            flags = [f for flag, path in paths.items() for f in ("--" + flag, path)]
            if scheduler_shift is not None:
                # The control: dit-run with another shift than diffusers'.
                config = dict(self.scheduler, **scheduler_shift)
                path = os.path.join(self.workdir, self.model + ".control-scheduler.json")
                json.dump(config, open(path, "w"))
                flags += ["--scheduler-config", path]
            ranks = len(manifest["ranks"])
            run([ARGS.dit_run, plan, "--nproc", str(ranks), "--weights", self.folder,
                 "--steps", str(STEPS), *flags, "--output", out])
            if reference is None:
                reference = self.reference_latents(pipe, manifest, values)
            errors[axis] = relative_error(np.load(out), reference)
        return errors

    # --- the VAE decode ---

    def vae_folder(self):
        folder = os.path.join(self.workdir, self.model + ".vae")
        shutil.rmtree(folder, ignore_errors=True)
        tiny = os.path.join(ROOT, "models", self.vae_transformer)
        shutil.copytree(os.path.join(tiny, "transformer"), os.path.join(folder, "transformer"))
        vae_config = json.load(open(self.vae_config))
        index = json.load(open(os.path.join(tiny, "model_index.json")))
        index["vae"] = ["diffusers", vae_config["_class_name"]]
        json.dump(index, open(os.path.join(folder, "model_index.json"), "w"))
        os.makedirs(os.path.join(folder, "vae"))
        save_diffusers_model(self.vae_config, os.path.join(folder, "vae"), SEED + 7)
        return folder

    def vae_stage(self):
        """{axis: error}: one process, and the decode split in two bands
        (--vae-parallel-size 2), each against diffusers' decode."""
        import torch
        folder = self.vae_folder()
        vae = diffusers_class(json.load(open(self.vae_config))["_class_name"]).from_pretrained(
            os.path.join(folder, "vae"))
        errors = {}
        reference = None
        # The bands sit on the ranks of a 2-rank transformer replica.
        for axis, flags in (("one rank", []),
                            ("vae2", ["--ulysses-degree", "2", "--vae-parallel-size", "2"])):
            label = self.model + ".vae-" + axis.replace(" ", "-")
            plan = os.path.join(self.workdir, label + ".plan")
            manifest = self.compile(folder, plan, ["--batch-size", "2", *flags])
            values, paths = self.inputs(manifest, self.workdir)
            video = manifest["workload"]["frames"] > 1
            out = os.path.join(self.workdir, label + (".mp4" if video else ".png"))
            pixels = os.path.join(self.workdir, label + ".pixels.npy")
            run([ARGS.dit_run, plan, "--decode-only", "--nproc", str(len(manifest["ranks"])),
                 "--latents", paths["latents"], "--weights", folder, "--output", out,
                 "--save-pixels", pixels])
            if reference is None:
                with torch.no_grad():
                    reference = self.decode(vae, tensor(values["latents"])).numpy()
            errors[axis] = relative_error(np.load(pixels), reference)
        return errors

    def decode(self, vae, latents):
        """The pipeline's decode of dit-run's [B, C, 1, H, W] latents: an
        AutoencoderKL's, latents / scaling_factor + shift_factor."""
        shift = vae.config.shift_factor or 0.0
        return vae.decode(latents[:, :, 0] / vae.config.scaling_factor + shift).sample

    # --- the text encoders, and a prompt to pixels ---

    def full_folder(self):
        """A whole tiny pipeline: the tiny transformer and VAE (diffusers),
        tokenizers and text encoders (transformers), the scheduler."""
        folder = os.path.join(self.workdir, self.model + ".pipeline")
        if os.path.exists(os.path.join(folder, "model_index.json")):
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        tiny = self.tiny if os.path.isabs(self.tiny) else os.path.join(ROOT, "models", self.tiny)
        shutil.copytree(tiny, folder)
        save_diffusers_model(os.path.join(folder, "transformer", "config.json"),
                             os.path.join(folder, "transformer"), SEED)
        save_diffusers_model(os.path.join(folder, "vae", "config.json"),
                             os.path.join(folder, "vae"), SEED + 7)
        import text_check
        text_check.make(argparse.Namespace(
            transformer=os.path.join(folder, "transformer", "config.json"), snapshot=folder,
            seed=SEED, dtype="f32", family=self.text_family, t5_heads=3, break_=None))
        index = json.load(open(os.path.join(folder, "model_index.json")))
        for encoder in [k for k in index if k.startswith("text_encoder")]:
            save_transformers_encoder(os.path.join(folder, encoder), SEED + 11 + len(encoder))
        self.save_scheduler(folder)
        return folder

    def full_pipeline(self, folder):
        import transformers
        components = {}
        index = json.load(open(os.path.join(folder, "model_index.json")))
        for name, (library, class_name) in ((k, v) for k, v in index.items()
                                            if isinstance(v, list)):
            if name.startswith("text_encoder") or name.startswith("tokenizer"):
                components[name] = getattr(transformers, class_name).from_pretrained(
                    os.path.join(folder, name))
            elif name == "vae":
                components[name] = diffusers_class(class_name).from_pretrained(
                    os.path.join(folder, name))
        return self.pipeline(folder, **components)

    def text_stage(self):
        folder = self.full_folder()
        plan = os.path.join(self.workdir, self.model + ".text-plan")
        manifest = self.compile(folder, plan)
        embeds = os.path.join(self.workdir, self.model + ".text.npy")
        pooled = os.path.join(self.workdir, self.model + ".pooled.npy")
        extra = ["--save-pooled", pooled] if manifest["model"].get("pooled_dim") else []
        run([ARGS.dit_run, plan, "--nproc", "1", "--weights", folder, "--prompt", PROMPT,
             "--negative-prompt", NEGATIVE, "--steps", "1", "--save-text-embeds", embeds,
             *extra, "--output", os.path.join(self.workdir, self.model + ".text-run.npy")])
        text, pool = self.reference_text(self.full_pipeline(folder), manifest)
        error = relative_error(np.load(embeds), text)
        if pool is not None:
            error = max(error, relative_error(np.load(pooled), pool))
        return {"one rank": error}

    def pipeline_stage(self):
        import torch
        folder = self.full_folder()
        plan = os.path.join(self.workdir, self.model + ".pipeline-plan")
        manifest = self.compile(folder, plan)
        values, paths = self.inputs(manifest, self.workdir)
        video = manifest["workload"]["frames"] > 1
        out = os.path.join(self.workdir, self.model + (".prompt.mp4" if video else ".prompt.png"))
        pixels = os.path.join(self.workdir, self.model + ".prompt-pixels.npy")
        run([ARGS.dit_run, plan, "--nproc", "1", "--weights", folder, "--prompt", PROMPT,
             "--negative-prompt", NEGATIVE, "--steps", str(STEPS), "--latents",
             paths["latents"], "--output", out, "--save-pixels", pixels])
        pipe = self.full_pipeline(folder)
        reference = self.reference_pixels(pipe, manifest, values["latents"])
        # The pipeline hands back (x / 2 + 0.5) clamped; dit-run saves x.
        ours = np.clip(np.load(pixels) / 2 + 0.5, 0, 1)
        return {"one rank": relative_error(ours, reference)}


class Wan(Family):
    model = "wan2.1-t2v-1.3b"
    workload = ["--height", "64", "--width", "64", "--num-frames", "5"]
    scheduler = published.WAN_UNIPC
    control = {"flow_shift": 5.0}
    pipeline_name = "WanPipeline"
    absent = ("tokenizer", "text_encoder", "vae")
    vae_config = os.path.join(ROOT, "models", "tiny-wan", "vae", "config.json")
    vae_transformer = "tiny-wan"
    tiny = "tiny-wan"
    text_family = "wan"

    def call_args(self, manifest, latents):
        w = manifest["workload"]
        return dict(latents=tensor(latents), height=w["height"], width=w["width"],
                    num_frames=w["frames"], num_inference_steps=STEPS,
                    guidance_scale=w["guidance_scale"])

    def reference_latents(self, pipe, manifest, values):
        text = values["text-embeds"]
        out = pipe(prompt_embeds=tensor(text[0]), negative_prompt_embeds=tensor(text[1]),
                   output_type="latent", **self.call_args(manifest, values["latents"]))
        return out.frames.numpy()

    def decode(self, vae, latents):
        """WanPipeline's: latents / (1 / latents_std) + latents_mean."""
        import torch
        z = vae.config.z_dim
        mean = torch.tensor(vae.config.latents_mean).view(1, z, 1, 1, 1)
        std = 1.0 / torch.tensor(vae.config.latents_std).view(1, z, 1, 1, 1)
        return vae.decode(latents / std + mean).sample

    def reference_text(self, pipe, manifest):
        cond, uncond = pipe.encode_prompt(PROMPT, NEGATIVE, do_classifier_free_guidance=True,
                                          max_sequence_length=manifest["workload"]["text_tokens"])
        return np.stack([cond.numpy(), uncond.numpy()]), None

    def reference_pixels(self, pipe, manifest, latents):
        out = pipe(prompt=PROMPT, negative_prompt=NEGATIVE, output_type="pt",
                   max_sequence_length=manifest["workload"]["text_tokens"],
                   **self.call_args(manifest, latents))
        return out.frames.numpy().transpose(0, 2, 1, 3, 4)  # [B, F, C, H, W] -> dit-run's


def pack_2x2(latents):
    """[B, C, 1, H, W] -> the packed [B, (H/2)(W/2), 4C] tokens of FLUX's and
    Qwen-Image's pipelines (their _pack_latents)."""
    b, c, _, h, w = latents.shape
    x = latents.reshape(b, c, h // 2, 2, w // 2, 2).transpose(0, 2, 4, 1, 3, 5)
    return np.ascontiguousarray(x.reshape(b, (h // 2) * (w // 2), c * 4))


def unpack_2x2(tokens, c, h, w):
    """The inverse of pack_2x2, to dit-run's [B, C, 1, H, W]."""
    b = tokens.shape[0]
    x = tokens.reshape(b, h // 2, w // 2, c, 2, 2).transpose(0, 3, 1, 4, 2, 5)
    return x.reshape(b, c, 1, h, w)


class Flux(Family):
    model = "flux.1-dev"
    workload = ["--height", "64", "--width", "64"]
    scheduler = published.FLUX_EULER
    control = {"max_shift": 2.0}
    pipeline_name = "FluxPipeline"
    absent = ("vae", "text_encoder", "tokenizer", "text_encoder_2", "tokenizer_2")
    vae_config = os.path.join(ROOT, "models", "tiny-flux", "vae", "config.json")
    vae_transformer = "tiny-flux"
    tiny = "tiny-flux"
    text_family = "flux"

    def call_args(self, manifest, latents):
        w = manifest["workload"]
        return dict(latents=tensor(pack_2x2(latents)), height=w["height"], width=w["width"],
                    num_inference_steps=STEPS, guidance_scale=w["guidance_scale"])

    def reference_latents(self, pipe, manifest, values):
        latents = values["latents"]
        out = pipe(prompt_embeds=tensor(values["text-embeds"][0]),
                   pooled_prompt_embeds=tensor(values["pooled-embeds"][0]),
                   output_type="latent", **self.call_args(manifest, latents))
        return unpack_2x2(out.images.numpy(), *np.array(latents.shape)[[1, 3, 4]])

    def reference_text(self, pipe, manifest):
        text, pooled, _ = pipe.encode_prompt(
            PROMPT, None, max_sequence_length=manifest["workload"]["text_tokens"])
        return text.numpy()[None], pooled.numpy()[None]

    def reference_pixels(self, pipe, manifest, latents):
        out = pipe(prompt=PROMPT, output_type="pt",
                   max_sequence_length=manifest["workload"]["text_tokens"],
                   **self.call_args(manifest, latents))
        return out.images.numpy()


class QwenImage(Flux):
    model = "qwen-image"
    scheduler = published.QWEN_EULER
    control = {"base_shift": 1.5, "max_shift": 1.5}
    pipeline_name = "QwenImagePipeline"
    absent = ("vae", "text_encoder", "tokenizer")
    vae_config = os.path.join(HERE, "..", "Vae", "Inputs", "qwen-like.json")
    tiny = None  # dit-run does not encode Qwen-Image's prompt yet (issue 51)

    def reference_latents(self, pipe, manifest, values):
        import torch
        w = manifest["workload"]
        latents, text = values["latents"], values["text-embeds"]
        # dit-run's default text mask: every token valid.
        mask = torch.ones(text.shape[1:3], dtype=torch.int64)
        out = pipe(prompt_embeds=tensor(text[0]), prompt_embeds_mask=mask,
                   negative_prompt_embeds=tensor(text[1]), negative_prompt_embeds_mask=mask,
                   true_cfg_scale=w["guidance_scale"], latents=tensor(pack_2x2(latents)),
                   height=w["height"], width=w["width"], num_inference_steps=STEPS,
                   output_type="latent")
        return unpack_2x2(out.images.numpy(), *np.array(latents.shape)[[1, 3, 4]])

    def decode(self, vae, latents):
        """QwenImagePipeline's: latents / (1 / latents_std) + latents_mean,
        decoded as one frame."""
        return Wan.decode(self, vae, latents)[:, :, 0]


class SD3(Family):
    model = "sd3-medium"
    workload = ["--height", "64", "--width", "64"]
    scheduler = published.SD3_EULER
    control = {"shift": 5.0}
    pipeline_name = "StableDiffusion3Pipeline"
    absent = ("vae", "text_encoder", "tokenizer", "text_encoder_2", "tokenizer_2",
              "text_encoder_3", "tokenizer_3")
    vae_config = os.path.join(HERE, "..", "Vae", "Inputs", "sd3-like.json")
    vae_transformer = "tiny-flux"
    text_family = "sd3"

    @property
    def tiny(self):
        """sd3-medium's transformer shrunk (no bundled tiny SD3), beside
        the SD3-like VAE."""
        folder = os.path.join(self.workdir, "sd3-tiny-source")
        if not os.path.exists(folder):
            shrink_table.shrink(os.path.join(ROOT, "models", self.model), folder,
                                edits_of(self.model))
            shutil.rmtree(os.path.join(folder, "vae"), ignore_errors=True)
            os.makedirs(os.path.join(folder, "vae"))
            # The SD3-like VAE with the transformer's 16 latent channels.
            vae = json.load(open(self.vae_config))
            transformer = json.load(open(os.path.join(folder, "transformer", "config.json")))
            vae["latent_channels"] = transformer["in_channels"]
            json.dump(vae, open(os.path.join(folder, "vae", "config.json"), "w"))
        return folder

    def call_args(self, manifest, latents):
        w = manifest["workload"]
        return dict(latents=tensor(latents[:, :, 0]), height=w["height"], width=w["width"],
                    num_inference_steps=STEPS, guidance_scale=w["guidance_scale"])

    def reference_latents(self, pipe, manifest, values):
        text, pooled = values["text-embeds"], values["pooled-embeds"]
        out = pipe(prompt_embeds=tensor(text[0]), negative_prompt_embeds=tensor(text[1]),
                   pooled_prompt_embeds=tensor(pooled[0]),
                   negative_pooled_prompt_embeds=tensor(pooled[1]),
                   output_type="latent", **self.call_args(manifest, values["latents"]))
        return out.images.numpy()[:, :, None]

    @staticmethod
    def t5_length(manifest):
        """SD3's text is CLIP's 77 tokens, then T5's max_sequence_length."""
        return manifest["workload"]["text_tokens"] - 77

    def reference_text(self, pipe, manifest):
        text, negative, pooled, negative_pooled = pipe.encode_prompt(
            PROMPT, None, None, negative_prompt=NEGATIVE, do_classifier_free_guidance=True,
            max_sequence_length=self.t5_length(manifest))
        return (np.stack([text.numpy(), negative.numpy()]),
                np.stack([pooled.numpy(), negative_pooled.numpy()]))

    def reference_pixels(self, pipe, manifest, latents):
        out = pipe(prompt=PROMPT, negative_prompt=NEGATIVE, output_type="pt",
                   max_sequence_length=self.t5_length(manifest),
                   **self.call_args(manifest, latents))
        return out.images.numpy()


def ones_mask(text):
    """dit-run's default text mask, every token valid: [B, T] of text
    [B, T, E]."""
    import torch
    return torch.ones(text.shape[:2], dtype=torch.int64)


def video_call(w):
    """A video pipeline's size, steps and guidance for workload `w`, latent
    output."""
    return dict(height=w["height"], width=w["width"], num_frames=w["frames"],
                num_inference_steps=STEPS, guidance_scale=w["guidance_scale"],
                output_type="latent")


def masked_branches(text):
    """The conditional and unconditional embeddings with their (all-valid)
    masks, as LTX's and Mochi's pipelines take them."""
    return dict(prompt_embeds=tensor(text[0]), prompt_attention_mask=ones_mask(text[0]),
                negative_prompt_embeds=tensor(text[1]),
                negative_prompt_attention_mask=ones_mask(text[1]))


class HunyuanVideo(Family):
    model = "hunyuanvideo"
    workload = ["--height", "64", "--width", "64", "--num-frames", "5"]
    scheduler = published.HUNYUAN_EULER
    control = {"shift": 3.0}
    pipeline_name = "HunyuanVideoPipeline"
    absent = ("text_encoder", "tokenizer", "text_encoder_2", "tokenizer_2", "vae")

    def reference_latents(self, pipe, manifest, values):
        w = manifest["workload"]
        text = values["text-embeds"][0]
        # Guidance-distilled: one branch, the embedded guidance (the
        # pipeline multiplies it by 1000, as dit-run's plan does).
        out = pipe(prompt_embeds=tensor(text),
                   pooled_prompt_embeds=tensor(values["pooled-embeds"][0]),
                   prompt_attention_mask=ones_mask(text), latents=tensor(values["latents"]),
                   **video_call(w))
        return out.frames.numpy()


class CogVideoX(Family):
    model = "cogvideox-5b"
    workload = ["--height", "64", "--width", "64", "--num-frames", "5"]
    scheduler = published.COG_DDIM
    control = {"snr_shift_scale": 1.0}
    pipeline_name = "CogVideoXPipeline"
    absent = ("tokenizer", "text_encoder", "vae")

    def reference_latents(self, pipe, manifest, values):
        w = manifest["workload"]
        text = values["text-embeds"]
        # CogVideoX's pipeline takes and returns [B, F, C, H, W].
        latents = values["latents"].transpose(0, 2, 1, 3, 4)
        out = pipe(prompt_embeds=tensor(text[0]), negative_prompt_embeds=tensor(text[1]),
                   latents=tensor(latents), **video_call(w))
        return out.frames.numpy().transpose(0, 2, 1, 3, 4)


class CogVideoX2b(CogVideoX):
    model = "cogvideox-2b"
    # Its fixed position table covers max_text_seq_length text tokens.
    text_tokens = 226


class LTXVideo(Family):
    model = "ltx-video"
    workload = ["--height", "64", "--width", "64", "--num-frames", "9"]
    scheduler = published.LTX_EULER
    control = {"max_shift": 1.0}
    pipeline_name = "LTXPipeline"
    absent = ("tokenizer", "text_encoder", "vae")

    def reference_latents(self, pipe, manifest, values):
        w = manifest["workload"]
        text, latents = values["text-embeds"], values["latents"]
        # LTX's pipeline packs [B, C, F, H, W] (patch 1) as [B, F H W, C].
        b, c, f, h, wd = latents.shape
        packed = latents.transpose(0, 2, 3, 4, 1).reshape(b, f * h * wd, c)
        out = pipe(latents=tensor(packed), **masked_branches(text), **video_call(w))
        return out.frames.numpy().reshape(b, f, h, wd, c).transpose(0, 4, 1, 2, 3)


class Mochi(Family):
    model = "mochi-1-preview"
    workload = ["--height", "64", "--width", "64", "--num-frames", "7"]
    scheduler = published.MOCHI_EULER
    control = {"shift": 3.0}
    pipeline_name = "MochiPipeline"
    absent = ("tokenizer", "text_encoder", "vae")

    def reference_latents(self, pipe, manifest, values):
        w = manifest["workload"]
        text = values["text-embeds"]
        out = pipe(latents=tensor(values["latents"]), **masked_branches(text),
                   **video_call(w))
        return out.frames.numpy()


FAMILIES = {"wan": Wan, "flux": Flux, "qwen-image": QwenImage, "sd3": SD3,
            "hunyuanvideo": HunyuanVideo, "cogvideox-5b": CogVideoX,
            "cogvideox-2b": CogVideoX2b, "ltx-video": LTXVideo, "mochi": Mochi}
# The stages each family runs in dit-run today.
STAGES = {"wan": ("transformer", "vae", "text", "pipeline"),
          "flux": ("transformer", "vae", "text", "pipeline"),
          "sd3": ("transformer", "vae", "text", "pipeline"),
          "qwen-image": ("transformer", "vae"),
          "hunyuanvideo": ("transformer",), "cogvideox-5b": ("transformer",),
          "cogvideox-2b": ("transformer",), "ltx-video": ("transformer",),
          "mochi": ("transformer",)}



def table(rows_files):
    rows = []
    for path in rows_files:
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    import diffusers
    import torch
    import transformers
    lines = [
        "# Parity with diffusers",
        "",
        "Generated by `test/Parity/oracle.py table` from the rows that",
        "`test/Parity/diffusers.test` writes; CI regenerates it and fails when it",
        "differs from this file. Each row is the largest relative error, max",
        "|dit-run - diffusers| / max |diffusers|, of dit-run's float32 run against",
        "diffusers' own pipeline, on the same tiny pipeline folder (made by",
        "diffusers' and transformers' classes and save_pretrained, random weights)",
        "and the same inputs:",
        "",
        "- transformer: the denoising loop (3 steps) with the family's published",
        "  scheduler, from the same latents and text embeddings (output_type",
        "  latent);",
        "- vae: the VAE decode of the same latents, as the pipeline scales them;",
        "- text: the tokenizers and text encoders, against the pipeline's",
        "  encode_prompt (prompt and negative prompt);",
        "- pipeline: a prompt to pixels (3 steps, the same initial latents).",
        "",
        "The axis is one rank, or a 2-rank configuration compared with diffusers",
        "directly (each is also compared with one rank by the runtime tests).",
        "Families whose text encoders or VAE dit-run does not run yet have no such",
        "rows.",
        "",
        f"Versions: torch {torch.__version__}, diffusers {diffusers.__version__}, "
        f"transformers {transformers.__version__}, numpy {np.__version__}.",
        "",
        "| family | stage | axis | max relative error | tolerance |",
        "|---|---|---|---|---|",
    ]
    for row in sorted(rows, key=lambda r: (r["family"], r["stage"], r["axis"])):
        lines.append(f"| {row['family']} | {row['stage']} | {row['axis']} | "
                     f"{row['error']:.2e} | {row['tolerance']:.0e} |")
    return "\n".join(lines) + "\n"


def main():
    global ARGS
    if len(sys.argv) > 1 and sys.argv[1] == "table":
        sys.stdout.write(table(sys.argv[2:]))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--ditc", required=True)
    parser.add_argument("--dit-run", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--rows")
    parser.add_argument("--only", nargs="*", choices=sorted(FAMILIES))
    parser.add_argument("--stages", default="transformer,vae,text,pipeline")
    parser.add_argument("--control", action="store_true",
                        help="also run each transformer stage with another scheduler "
                             "shift in dit-run, which must MISMATCH")
    ARGS = parser.parse_args()
    os.makedirs(ARGS.workdir, exist_ok=True)
    status = 0
    rows = []
    for name in ARGS.only or sorted(FAMILIES):
        family = FAMILIES[name](ARGS.workdir)
        family.make()
        if ARGS.control:
            try:
                error = family.transformer_stage(scheduler_shift=family.control)["one rank"]
            except Failed as failure:
                print(f"{name} control: FAILED: {failure}")
                status = 1
                continue
            verdict = "MISMATCH" if error > STAGE_TOLERANCE else "ok"
            print(f"{name} control (dit-run's scheduler with {json.dumps(family.control)}): "
                  f"max relative error {error:.3e}: {verdict}")
            status |= verdict != "MISMATCH"
        for stage in [s for s in ARGS.stages.split(",") if s in STAGES[name]]:
            tolerance = PIPELINE_TOLERANCE if stage == "pipeline" else STAGE_TOLERANCE
            try:
                errors = getattr(family, stage + "_stage")()
            except Failed as failure:
                print(f"{name} {stage}: FAILED: {failure}")
                status = 1
                continue
            for axis, error in errors.items():
                verdict = "ok" if error <= tolerance else "MISMATCH"
                status |= verdict != "ok"
                print(f"{name} {stage} {axis}: max relative error {error:.3e} "
                      f"(tolerance {tolerance:.0e}): {verdict}")
                rows.append({"family": name, "stage": stage, "axis": axis,
                             "error": error, "tolerance": tolerance})
    if ARGS.rows:
        with open(ARGS.rows, "a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    sys.exit(status)


if __name__ == "__main__":
    main()
