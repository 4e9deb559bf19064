"""Float64 NumPy references of the diffusers schedulers dit-run reproduces.

Written from diffusers' scheduler classes and pipelines (set_timesteps, step,
and each pipeline's sigmas, mu and transformer timestep), following their
structure rather than dit-run's: UniPC keeps its model-output list and runs
the predictor and corrector as diffusers writes them, DDIM forms the x0
prediction first. Tables diffusers stores as float32 are rounded to float32
where it rounds them; the updates themselves run in float64.

    ref = reference_schedule(config_or_None, family, steps, image_seq_len,
                             video_seq_len, sigmas=None)
    ref.sigmas, ref.timesteps, ref.mu
    stepper = ref.stepper()          # one per rank: its own history
    x = stepper.step(i, x, v)        # step i of the schedule
"""
import json
import math

import numpy as np

f32 = np.float32


def calculate_shift(seq_len, base_seq_len, max_seq_len, base_shift, max_shift):
    m = (max_shift - base_shift) / (max_seq_len - base_seq_len)
    b = base_shift - m * base_seq_len
    return seq_len * m + b


def linear_quadratic_schedule(num_steps, threshold_noise):
    linear_steps = num_steps // 2
    linear = [i * threshold_noise / linear_steps for i in range(linear_steps)]
    diff = linear_steps - threshold_noise * num_steps
    quadratic_steps = num_steps - linear_steps
    quadratic_coef = diff / (linear_steps * quadratic_steps ** 2)
    linear_coef = threshold_noise / linear_steps - 2 * diff / (quadratic_steps ** 2)
    const = quadratic_coef * (linear_steps ** 2)
    quadratic = [quadratic_coef * (i ** 2) + linear_coef * i + const
                 for i in range(linear_steps, num_steps)]
    return [1.0 - x for x in linear + quadratic]


def pipeline_sigmas(family, n):
    """The sigmas each pipeline passes to set_timesteps, or None."""
    if family in ("flux", "qwen_image", "ltx_video"):
        return np.linspace(1.0, 1 / n, n)
    if family == "hunyuan_video":
        return np.linspace(1.0, 0.0, n + 1)[:-1]
    if family == "mochi":
        return np.array(linear_quadratic_schedule(n, 0.025))
    return None


def guidance_input(family, g):
    """What the pipeline passes as the transformer's guidance: HunyuanVideo
    multiplies by 1000 (float32); FLUX passes the scale."""
    if family == "hunyuan_video":
        return float(f32(g) * f32(1000))
    return g


class FlowMatchEuler:
    def __init__(self, c):
        self.c = c
        self.T = c.get("num_train_timesteps", 1000)
        self.shift = c.get("shift", 1.0)
        self.dynamic = c.get("use_dynamic_shifting", False)
        t = np.linspace(1, self.T, self.T, dtype=np.float32)[::-1].copy()
        sigmas = t / f32(self.T)
        if not self.dynamic:
            sigmas = f32(self.shift) * sigmas / (f32(1) + f32(self.shift - 1) * sigmas)
        self.sigma_max = float(sigmas[0])
        self.sigma_min = float(sigmas[-1])

    def time_shift(self, mu, t):
        if self.c.get("time_shift_type", "exponential") == "exponential":
            return math.exp(mu) / (math.exp(mu) + (1 / t - 1) ** 1.0)
        return mu / (mu + (1 / t - 1) ** 1.0)

    def set_timesteps(self, n, sigmas=None, mu=None):
        if sigmas is None:
            timesteps = np.linspace(self.sigma_max * self.T, self.sigma_min * self.T, n)
            sigmas = timesteps / self.T
        else:
            sigmas = np.array(sigmas).astype(np.float32)
        if self.dynamic:
            sigmas = self.time_shift(mu, sigmas)
        else:
            sigmas = self.shift * sigmas / (1 + (self.shift - 1) * sigmas)
        if self.c.get("shift_terminal"):
            one_minus_z = 1 - sigmas
            scale = one_minus_z[-1] / (1 - self.c["shift_terminal"])
            sigmas = 1 - (one_minus_z / scale)
        sigmas = sigmas.astype(np.float32)
        timesteps = sigmas * f32(self.T)
        if self.c.get("invert_sigmas", False):
            sigmas = (f32(1.0) - sigmas).astype(np.float32)
            timesteps = sigmas * f32(self.T)
            sigmas = np.concatenate([sigmas, np.ones(1, np.float32)])
        else:
            sigmas = np.concatenate([sigmas, np.zeros(1, np.float32)])
        self.sigmas = sigmas.astype(np.float64)
        self.timesteps = timesteps.astype(np.float64)

    def verbatim(self, sigmas):
        self.sigmas = np.array(sigmas, dtype=np.float32).astype(np.float64)
        self.timesteps = (np.array(sigmas, dtype=np.float32)[:-1] * f32(self.T)).astype(np.float64)

    def stepper(self):
        sigmas = self.sigmas

        class Euler:
            def step(self, i, x, v):
                dt = float(f32(sigmas[i + 1]) - f32(sigmas[i]))
                return x + dt * v
        return Euler()


class UniPCFlow:
    def __init__(self, c):
        self.c = c
        self.T = c.get("num_train_timesteps", 1000)
        self.order = c.get("solver_order", 2)
        self.solver_type = c.get("solver_type", "bh2")
        if self.solver_type in ("midpoint", "heun", "logrho"):
            self.solver_type = "bh2"
        self.lower_order_final = c.get("lower_order_final", True)
        self.disable_corrector = c.get("disable_corrector", []) or []

    def set_timesteps(self, n):
        shift = self.c.get("flow_shift", 1.0)
        sigmas = np.linspace(1, 1 / self.T, n + 1)[:-1]
        sigmas = shift * sigmas / (1 + (shift - 1) * sigmas)
        if self.c.get("shift_terminal"):
            one_minus_z = 1 - sigmas
            scale = one_minus_z[-1] / (1 - self.c["shift_terminal"])
            sigmas = 1 - (one_minus_z / scale)
        if np.fabs(sigmas[0] - 1) < 1e-6:
            sigmas[0] -= 1e-6
        timesteps = (sigmas * self.T).copy()
        last = 0 if self.c.get("final_sigmas_type", "zero") == "zero" else sigmas[-1]
        self.sigmas = np.concatenate([sigmas, [last]]).astype(np.float32).astype(np.float64)
        self.timesteps = timesteps.astype(np.int64).astype(np.float64)

    def verbatim(self, sigmas):
        s = np.array(sigmas, dtype=np.float64)
        self.sigmas = s.astype(np.float32).astype(np.float64)
        self.timesteps = (s[:-1] * self.T).astype(np.int64).astype(np.float64)

    def stepper(self):
        return UniPCState(self)


class UniPCState:
    """One rank's UniPC: diffusers' step() with its lists, in float64."""

    def __init__(self, sched):
        self.s = sched
        self.model_outputs = [None] * sched.order
        self.lower_order_nums = 0
        self.last_sample = None
        self.this_order = None

    def lam(self, sigma):
        return math.log(1 - sigma) - math.log(sigma) if sigma > 0 else math.inf

    def coefficients(self, sigma_t, sigma_s0, sigmas_si, order):
        h = self.lam(sigma_t) - self.lam(sigma_s0)
        rks = [(self.lam(si) - self.lam(sigma_s0)) / h for si in sigmas_si] + [1.0]
        hh = -h
        h_phi_1 = math.expm1(hh)
        h_phi_k = h_phi_1 / hh - 1
        factorial_i = 1
        B_h = hh if self.s.solver_type == "bh1" else math.expm1(hh)
        R, b = [], []
        for i in range(1, order + 1):
            R.append([rk ** (i - 1) for rk in rks])
            b.append(h_phi_k * factorial_i / B_h)
            factorial_i *= i + 1
            h_phi_k = h_phi_k / hh - 1 / factorial_i
        return rks, np.array(R), np.array(b), h_phi_1, B_h

    def predictor(self, i, x, order):
        sig = self.s.sigmas
        sigma_t, sigma_s0 = sig[i + 1], sig[i]
        alpha_t = 1 - sigma_t
        m0 = self.model_outputs[-1]
        rks, R, b, h_phi_1, B_h = self.coefficients(
            sigma_t, sigma_s0, [sig[i - k] for k in range(1, order)], order)
        D1s = [(self.model_outputs[-(k + 1)] - m0) / rks[k - 1] for k in range(1, order)]
        x_t_ = sigma_t / sigma_s0 * x - alpha_t * h_phi_1 * m0
        if D1s:
            rhos_p = np.array([0.5]) if order == 2 else np.linalg.solve(R[:-1, :-1], b[:-1])
            pred_res = sum(r * d for r, d in zip(rhos_p, D1s))
            return x_t_ - alpha_t * B_h * pred_res
        return x_t_

    def corrector(self, i, model_t, last_sample, order):
        sig = self.s.sigmas
        sigma_t, sigma_s0 = sig[i], sig[i - 1]
        alpha_t = 1 - sigma_t
        m0 = self.model_outputs[-1]
        rks, R, b, h_phi_1, B_h = self.coefficients(
            sigma_t, sigma_s0, [sig[i - (k + 1)] for k in range(1, order)], order)
        D1s = [(self.model_outputs[-(k + 1)] - m0) / rks[k - 1] for k in range(1, order)]
        rhos_c = np.array([0.5]) if order == 1 else np.linalg.solve(R, b)
        x_t_ = sigma_t / sigma_s0 * last_sample - alpha_t * h_phi_1 * m0
        corr_res = sum(r * d for r, d in zip(rhos_c[:-1], D1s)) if D1s else 0
        return x_t_ - alpha_t * B_h * (corr_res + rhos_c[-1] * (model_t - m0))

    def step(self, i, x, v):
        s = self.s
        n = len(s.timesteps)
        use_corrector = i > 0 and (i - 1) not in s.disable_corrector and self.last_sample is not None
        m = x - s.sigmas[i] * v
        if use_corrector:
            x = self.corrector(i, m, self.last_sample, self.this_order)
        self.model_outputs = self.model_outputs[1:] + [m]
        order = min(s.order, n - i) if s.lower_order_final else s.order
        self.this_order = min(order, self.lower_order_nums + 1)
        self.last_sample = x
        out = self.predictor(i, x, self.this_order)
        self.lower_order_nums = min(self.lower_order_nums + 1, s.order)
        return out


class CogVideoXDDIM:
    def __init__(self, c):
        import numpy as _np
        self.c = c
        self.T = c.get("num_train_timesteps", 1000)
        start, end = c.get("beta_start", 0.00085), c.get("beta_end", 0.012)
        schedule = c.get("beta_schedule", "scaled_linear")
        if schedule == "scaled_linear":
            betas = torch_linspace(start ** 0.5, end ** 0.5, self.T) ** 2
        else:
            betas = torch_linspace(start, end, self.T).astype(np.float32).astype(np.float64)
        ac = _np.cumprod(1.0 - betas)
        snr = c.get("snr_shift_scale", 3.0)
        ac = ac / (snr + (1 - snr) * ac)
        if c.get("rescale_betas_zero_snr", False):
            root = _np.sqrt(ac)
            r0, rT = root[0], root[-1]
            root = (root - rT) * (r0 / (r0 - rT))
            ac = root ** 2
        self.ac = ac
        self.final = 1.0 if c.get("set_alpha_to_one", True) else ac[0]

    def set_timesteps(self, n):
        self.n = n
        spacing = self.c.get("timestep_spacing", "leading")
        if spacing == "linspace":
            t = np.linspace(0, self.T - 1, n).round()[::-1].copy().astype(np.int64)
        elif spacing == "leading":
            ratio = self.T // n
            t = (np.arange(0, n) * ratio).round()[::-1].copy().astype(np.int64)
            t += self.c.get("steps_offset", 0)
        else:
            ratio = self.T / n
            t = np.round(np.arange(self.T, 0, -ratio)).astype(np.int64) - 1
        self.timesteps = t.astype(np.float64)
        self.sigmas = None

    def stepper(self):
        sched = self

        class DDIM:
            def step(self, i, x, v):
                t = int(sched.timesteps[i])
                prev = t - sched.T // sched.n
                a_t = sched.ac[t]
                a_prev = sched.ac[prev] if prev >= 0 else sched.final
                beta = 1 - a_t
                kind = sched.c.get("prediction_type", "epsilon")
                if kind == "v_prediction":
                    x0 = a_t ** 0.5 * x - beta ** 0.5 * v
                elif kind == "epsilon":
                    x0 = (x - beta ** 0.5 * v) / a_t ** 0.5
                else:
                    x0 = v
                a = ((1 - a_prev) / (1 - a_t)) ** 0.5
                b = a_prev ** 0.5 - a_t ** 0.5 * a
                return a * x + b * x0
        return DDIM()


def torch_linspace(start, end, steps):
    step = (end - start) / (steps - 1)
    i = np.arange(steps)
    half = steps // 2
    return np.where(i < half, start + step * i, end - step * (steps - i - 1))


class Linear:
    """dit-run's default without a config: linspace(1, 0), t = 1000 sigma."""

    def __init__(self, n):
        self.sigmas = np.linspace(1.0, 0.0, n + 1)
        self.timesteps = self.sigmas[:-1] * 1000.0

    def stepper(self):
        sigmas = self.sigmas

        class Euler:
            def step(self, i, x, v):
                return x + float(f32(sigmas[i + 1]) - f32(sigmas[i])) * v
        return Euler()


class Reference:
    def __init__(self, sched, family, mu=None):
        self.sched = sched
        self.family = family
        self.mu = mu
        self.sigmas = sched.sigmas
        self.timesteps = sched.timesteps

    def stepper(self):
        return self.sched.stepper()

    def op_sigmas(self, i):
        """The sigma and sigma_next dit-run feeds the op (DDIM: none used)."""
        if self.sigmas is None:
            return 0.0, 0.0
        return float(self.sigmas[i]), float(self.sigmas[i + 1])


def reference_schedule(config, family, steps, image_seq_len, video_seq_len, sigmas=None):
    if config is None and sigmas is None:
        return Reference(Linear(steps), family)
    if config is None:
        sched = FlowMatchEuler({})
        sched.verbatim(sigmas)
        return Reference(sched, family)
    c = json.load(open(config)) if isinstance(config, str) else config
    cls = c["_class_name"]
    if cls == "FlowMatchEulerDiscreteScheduler":
        sched = FlowMatchEuler(c)
        if sigmas is not None:
            sched.verbatim(sigmas)
            return Reference(sched, family)
        mu = None
        if c.get("use_dynamic_shifting", False):
            seq = video_seq_len if family == "ltx_video" else image_seq_len
            mu = calculate_shift(seq, c.get("base_image_seq_len", 256),
                                 c.get("max_image_seq_len", 4096),
                                 c.get("base_shift", 0.5),
                                 c.get("max_shift", 1.16 if family == "sd3" else 1.15))
        sched.set_timesteps(steps, pipeline_sigmas(family, steps), mu)
        return Reference(sched, family, mu)
    if cls == "UniPCMultistepScheduler":
        sched = UniPCFlow(c)
        if sigmas is not None:
            sched.verbatim(sigmas)
        else:
            sched.set_timesteps(steps)
        return Reference(sched, family)
    if cls == "CogVideoXDDIMScheduler":
        sched = CogVideoXDDIM(c)
        sched.set_timesteps(steps)
        return Reference(sched, family)
    raise SystemExit(f"schedulers_ref: no reference for {cls}")
