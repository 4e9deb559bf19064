//===- Schedulers.cpp - denoising schedules as diffusers computes them ----===//
//
// Each schedule below follows the diffusers scheduler class it names:
// set_timesteps for the sigma and timestep tables, and step for the update,
// which is expressed as StepRule instructions so every rank applies it to
// its own shard. Where diffusers stores a table as float32 (torch tensors,
// or numpy float32 arrays), the value is rounded to float32 at the same
// point, so the sigmas, the timesteps and the Euler differences are
// diffusers' bits; the multistep and DDIM coefficients are computed in
// float64 and rounded once as they multiply a float32 tensor.
//
//===----------------------------------------------------------------------===//
#include "ditc/Runtime/Sched/Schedulers.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/Utf8.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace ditc::runtime {

using nlohmann::json;

namespace {
constexpr int64_t kMaxSteps = 100000;

/// numpy.linspace(start, stop, num) in float64, as numpy computes it.
std::vector<double> linspace(double start, double stop, int64_t num) {
  std::vector<double> y(size_t(std::max<int64_t>(num, 0)));
  if (num == 0)
    return y;
  int64_t div = num - 1;
  double delta = stop - start;
  for (int64_t i = 0; i < num; ++i) {
    // numpy's cases: one point has no step (i * delta); a zero step
    // divides first. A single point used to divide 0 by 0 (a one-step
    // FLUX schedule, whose linspace(1, 1/1, 1) has delta 0).
    double step = div > 0 ? delta / double(div) : 0.0;
    double offset = div <= 0     ? double(i) * delta
                    : step == 0 ? double(i) / double(div) * delta
                                : double(i) * step;
    y[size_t(i)] = offset + start;
  }
  if (num > 1)
    y.back() = stop;
  return y;
}

/// torch.linspace(start, end, steps) in float64: the first half counts up
/// from start and the second half down from end, as ATen's kernel does.
std::vector<double> torchLinspace(double start, double end, int64_t steps) {
  std::vector<double> y(static_cast<size_t>(steps));
  double step = steps > 1 ? (end - start) / double(steps - 1) : 0.0;
  int64_t half = steps / 2;
  for (int64_t i = 0; i < steps; ++i)
    y[size_t(i)] = i < half ? start + step * double(i)
                            : end - step * double(steps - i - 1);
  return y;
}

/// The pipeline's mu for dynamic shifting: calculate_shift in every
/// pipeline that has it (FLUX, SD3, Qwen-Image, LTX-Video).
double calculateShift(double seqLen, double baseSeqLen, double maxSeqLen,
                      double baseShift, double maxShift) {
  double m = (maxShift - baseShift) / (maxSeqLen - baseSeqLen);
  double b = baseShift - m * baseSeqLen;
  return seqLen * m + b;
}

/// Mochi's linear_quadratic_schedule(num_steps, threshold_noise).
std::vector<double> linearQuadratic(int64_t numSteps, double threshold) {
  int64_t linearSteps = numSteps / 2;
  std::vector<double> sigmas;
  for (int64_t i = 0; i < linearSteps; ++i)
    sigmas.push_back(double(i) * threshold / double(linearSteps));
  double stepDiff = double(linearSteps) - threshold * double(numSteps);
  int64_t quadraticSteps = numSteps - linearSteps;
  double quadraticCoef =
      stepDiff / double(linearSteps * quadraticSteps * quadraticSteps);
  double linearCoef = threshold / double(linearSteps) -
                      2 * stepDiff / double(quadraticSteps * quadraticSteps);
  double constant = quadraticCoef * double(linearSteps * linearSteps);
  for (int64_t i = linearSteps; i < numSteps; ++i)
    sigmas.push_back(quadraticCoef * double(i * i) + linearCoef * double(i) + constant);
  for (double &s : sigmas)
    s = 1.0 - s;
  return sigmas;
}

/// A sigma table as diffusers holds it: float64 numpy values, or float32
/// ones (then every elementwise numpy op rounds to float32, and Python
/// scalars are cast to float32 first, as numpy 1.x does).
struct Table {
  std::vector<double> v;
  bool f32 = false;
  double round(double x) const { return f32 ? double(float(x)) : x; }
};

void failConfig(const JsonObject &c, const std::string &field, const std::string &problem) {
  c.fail(field, problem);
}

/// Refuses a boolean option diffusers supports but this dit-run does not
/// reproduce, when it is on.
void refuseIfSet(const JsonObject &c, const std::string &field, const std::string &why) {
  if (c.getOptionalBool(field, false))
    failConfig(c, field, "is true; " + why);
}

double float32(double x) { return double(float(x)); }

/// Karras, exponential and beta sigmas re-space the schedule; neither
/// Wan's nor any other bundled snapshot selects them.
void refuseOtherSpacings(const JsonObject &c) {
  for (const char *field : {"use_karras_sigmas", "use_exponential_sigmas", "use_beta_sigmas"})
    refuseIfSet(c, field, "this dit-run reproduces the shifted linear sigmas only");
}

/// stretch_shift_to_terminal: rescales 1 - sigma so that the last sigma is
/// `terminal`. Under numpy 2's promotion rules (NEP 50, the numpy diffusers
/// runs with here) the Python float 1 - terminal takes the table's
/// precision, so a float32 table's scale is a float32 quotient (numpy 1.x
/// made it a float64 scalar, one float32 step away in Qwen-Image's last
/// sigma).
void stretchToTerminal(Table &table, double terminal) {
  if (terminal == 0.0 || table.v.empty())
    return;
  double scale =
      table.round(table.round(1.0 - table.v.back()) / table.round(1.0 - terminal));
  for (double &v : table.v)
    v = table.round(1.0 - table.round(table.round(1.0 - v) / table.round(scale)));
}

/// The sigmas and timesteps a family's pipeline hands to set_timesteps,
/// or nothing when it passes only num_inference_steps.
std::optional<std::vector<double>> pipelineSigmas(const std::string &family,
                                                  int64_t n) {
  if (family == "flux" || family == "qwen_image" || family == "ltx_video")
    return linspace(1.0, 1.0 / double(n), n);
  if (family == "hunyuan_video") {
    std::vector<double> s = linspace(1.0, 0.0, n + 1);
    s.pop_back();
    return s;
  }
  if (family == "mochi")
    return linearQuadratic(n, 0.025);
  return std::nullopt;
}

std::string describeNumber(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

//===----------------------------------------------------------------------===//
// FlowMatchEulerDiscreteScheduler
//===----------------------------------------------------------------------===//

Schedule flowMatchEuler(const JsonObject &c, const ScheduleRequest &r) {
  int64_t trainSteps = c.getOptionalInt("num_train_timesteps", 1, 1000000).value_or(1000);
  double shift = c.getOptionalDouble("shift", 1.0, 1e-6, 1e6);
  bool dynamic = c.getOptionalBool("use_dynamic_shifting", false);
  double baseShift = c.getOptionalDouble("base_shift", 0.5, -1e6, 1e6);
  double maxShift = c.getOptionalDouble("max_shift", 1.15, -1e6, 1e6);
  int64_t baseSeqLen = c.getOptionalInt("base_image_seq_len", 0, 1 << 30).value_or(256);
  int64_t maxSeqLen = c.getOptionalInt("max_image_seq_len", 0, 1 << 30).value_or(4096);
  bool invert = c.getOptionalBool("invert_sigmas", false);
  double shiftTerminal = c.getOptionalDouble("shift_terminal", 0.0, 0.0, 0.999999);
  std::string shiftType = c.getOptionalString("time_shift_type").value_or("exponential");
  if (shiftType != "exponential" && shiftType != "linear")
    failConfig(c, "time_shift_type", "must be 'exponential' or 'linear' (diffusers refuses others)");
  refuseOtherSpacings(c);
  refuseIfSet(c, "stochastic_sampling",
              "it draws fresh noise from torch's generator every step, which a "
              "deterministic run cannot reproduce");

  Schedule s;
  s.scheduler = "FlowMatchEulerDiscreteScheduler";
  int64_t n = r.steps;
  if (r.family == "mochi" && !r.sigmas && n < 2)
    throw BadInput("the run has 1 step, but Mochi's pipeline needs at least 2: its "
                   "linear_quadratic_schedule divides by num_steps // 2");
  Table table;
  if (r.sigmas) {
    // Verbatim: the K + 1 values are the scheduler's sigma table itself.
    s.sigmas.clear();
    for (double v : *r.sigmas)
      s.sigmas.push_back(float32(v));
    n = int64_t(s.sigmas.size()) - 1;
  } else {
    std::optional<std::vector<double>> given = pipelineSigmas(r.family, n);
    std::optional<double> mu;
    if (dynamic) {
      double seqLen;
      if (r.family == "flux" || r.family == "qwen_image" || r.family == "sd3")
        seqLen = double(r.imageSeqLen);
      else if (r.family == "ltx_video")
        seqLen = double(r.videoSeqLen);
      else
        failConfig(c, "use_dynamic_shifting",
                   "is true, but the " + (r.family.empty() ? "plan's" : r.family) +
                       " pipeline passes no mu to set_timesteps (diffusers raises "
                       "ValueError); use a config without dynamic shifting");
      if (baseSeqLen == maxSeqLen)
        failConfig(c, "max_image_seq_len",
                   "equals base_image_seq_len; calculate_shift divides by their difference");
      // SD3's pipeline defaults max_shift to 1.16 when the config lacks it.
      double maxDefault = r.family == "sd3" ? 1.16 : 1.15;
      mu = calculateShift(seqLen, double(baseSeqLen), double(maxSeqLen), baseShift,
                          c.has("max_shift") ? maxShift : maxDefault);
      s.mu = mu;
    }
    if (given) {
      // set_timesteps(sigmas=...): np.array(sigmas).astype(np.float32).
      table.f32 = true;
      for (double v : *given)
        table.v.push_back(float32(v));
    } else {
      // The __init__ table is float32 torch: t / T, shifted unless dynamic.
      auto initSigma = [&](int64_t k) {
        float v = float(k) / float(trainSteps);
        if (!dynamic)
          v = (float(shift) * v) / (1.0f + float(shift - 1.0) * v);
        return double(v);
      };
      double sigmaMax = initSigma(trainSteps), sigmaMin = initSigma(1);
      for (double t : linspace(sigmaMax * double(trainSteps),
                               sigmaMin * double(trainSteps), n))
        table.v.push_back(t / double(trainSteps));
    }
    for (double &v : table.v) {
      if (dynamic) {
        double e = table.round(std::exp(*mu)), m = table.round(*mu);
        double rest = table.round(table.round(1.0 / v) - 1.0);
        v = shiftType == "exponential" ? table.round(e / table.round(e + rest))
                                       : table.round(m / table.round(m + rest));
      } else {
        double fs = table.round(shift);
        v = table.round(table.round(fs * v) /
                        table.round(1.0 + table.round(table.round(shift - 1.0) * v)));
      }
    }
    stretchToTerminal(table, shiftTerminal);
    for (double v : table.v)
      s.sigmas.push_back(float32(v));
    if (invert)
      for (double &v : s.sigmas)
        v = float32(1.0 - v);
    s.sigmas.push_back(invert ? 1.0 : 0.0);
  }
  for (int64_t i = 0; i < n; ++i) {
    ScheduleStep step;
    step.sigma = s.sigmas[size_t(i)];
    step.sigmaNext = s.sigmas[size_t(i) + 1];
    // timesteps = sigmas * num_train_timesteps, a float32 torch product.
    step.timestep = float32(float(step.sigma) * float(trainSteps));
    s.steps.push_back(step);
  }
  return s;
}

//===----------------------------------------------------------------------===//
// UniPCMultistepScheduler (use_flow_sigmas, flow_prediction)
//===----------------------------------------------------------------------===//

/// Solves the small dense system A x = b (Gaussian elimination with
/// partial pivoting), as torch.linalg.solve does for UniPC's rhos.
std::vector<double> solve(std::vector<std::vector<double>> a, std::vector<double> b) {
  size_t n = b.size();
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t row = col + 1; row < n; ++row)
      if (std::fabs(a[row][col]) > std::fabs(a[pivot][col]))
        pivot = row;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (size_t row = col + 1; row < n; ++row) {
      double f = a[row][col] / a[col][col];
      for (size_t k = col; k < n; ++k)
        a[row][k] -= f * a[col][k];
      b[row] -= f * b[col];
    }
  }
  std::vector<double> x(n);
  for (size_t i = n; i-- > 0;) {
    double sum = b[i];
    for (size_t k = i + 1; k < n; ++k)
      sum -= a[i][k] * x[k];
    x[i] = sum / a[i][i];
  }
  return x;
}

struct UniPC {
  int order;
  bool bh2;
  double lambda(double sigma) const { return std::log(1.0 - sigma) - std::log(sigma); }

  /// The shared part of the predictor and the corrector: for an update from
  /// sigma_s0 to sigma_t with `order` and the earlier sigmas `previous`
  /// (newest first), the coefficients of x, of m0 and of each earlier model
  /// output, and the rhos' last entry (the corrector's weight of the new
  /// output). `corrector` selects solve(R, b) over UniPC-p's rhos.
  struct Update {
    double x, m0, mNew = 0;
    std::vector<double> earlier;
  };
  Update update(double sigmaT, double sigmaS0, const std::vector<double> &previous,
                int order, bool corrector) const {
    double alphaT = 1.0 - sigmaT;
    double h = lambda(sigmaT) - lambda(sigmaS0);
    std::vector<double> rks;
    for (int k = 1; k < order; ++k)
      rks.push_back((lambda(previous[size_t(k - 1)]) - lambda(sigmaS0)) / h);
    rks.push_back(1.0);
    double hh = -h; // predict_x0
    double hPhi1 = std::expm1(hh);
    double hPhiK = hPhi1 / hh - 1.0;
    double factorial = 1;
    double bh = bh2 ? std::expm1(hh) : hh;
    std::vector<std::vector<double>> rMatrix;
    std::vector<double> b;
    for (int i = 1; i <= order; ++i) {
      std::vector<double> row;
      for (double rk : rks)
        row.push_back(std::pow(rk, double(i - 1)));
      rMatrix.push_back(row);
      b.push_back(hPhiK * factorial / bh);
      factorial *= double(i + 1);
      hPhiK = hPhiK / hh - 1.0 / factorial;
    }
    std::vector<double> rhos;
    if (corrector) {
      rhos = order == 1 ? std::vector<double>{0.5} : solve(rMatrix, b);
    } else if (order == 2) {
      rhos = {0.5};
    } else if (order > 2) {
      std::vector<std::vector<double>> sub(size_t(order - 1));
      for (int i = 0; i < order - 1; ++i)
        sub[size_t(i)].assign(rMatrix[size_t(i)].begin(), rMatrix[size_t(i)].end() - 1);
      rhos = solve(sub, std::vector<double>(b.begin(), b.end() - 1));
    }
    Update u;
    u.x = sigmaT / sigmaS0;
    u.m0 = -alphaT * hPhi1;
    // D1_k = (m_k - m0) / rk_k, weighted by rhos[k] and -alpha_t B_h.
    for (int k = 1; k < order; ++k) {
      double w = -alphaT * bh * rhos[size_t(k - 1)] / rks[size_t(k - 1)];
      u.earlier.push_back(w);
      u.m0 -= w;
    }
    if (corrector) {
      // rhos[-1] * (m_new - m0)
      u.mNew = -alphaT * bh * rhos.back();
      u.m0 -= u.mNew;
    }
    return u;
  }
};

Schedule uniPC(const JsonObject &c, const ScheduleRequest &r) {
  int64_t trainSteps = c.getOptionalInt("num_train_timesteps", 1, 1000000).value_or(1000);
  int order = int(c.getOptionalInt("solver_order", 1, 3).value_or(2));
  std::string prediction = c.getOptionalString("prediction_type").value_or("epsilon");
  if (!c.getOptionalBool("use_flow_sigmas", false) || prediction != "flow_prediction")
    failConfig(c, c.getOptionalBool("use_flow_sigmas", false) ? "prediction_type"
                                                              : "use_flow_sigmas",
               "this dit-run runs UniPCMultistepScheduler in flow-prediction mode "
               "only (use_flow_sigmas true, prediction_type 'flow_prediction', as "
               "Wan's snapshots set it)");
  if (!c.getOptionalBool("predict_x0", true))
    failConfig(c, "predict_x0", "is false; flow prediction needs the x0 form");
  std::string solver = c.getOptionalString("solver_type").value_or("bh2");
  // diffusers maps the DPM-Solver names onto bh2.
  if (solver == "midpoint" || solver == "heun" || solver == "logrho")
    solver = "bh2";
  if (solver != "bh1" && solver != "bh2")
    failConfig(c, "solver_type", "must be 'bh1' or 'bh2'");
  bool lowerOrderFinal = c.getOptionalBool("lower_order_final", true);
  double flowShift = c.getOptionalDouble("flow_shift", 1.0, 1e-6, 1e6);
  double shiftTerminal = c.getOptionalDouble("shift_terminal", 0.0, 0.0, 0.999999);
  std::string finalType = c.getOptionalString("final_sigmas_type").value_or("zero");
  if (finalType != "zero" && finalType != "sigma_min")
    failConfig(c, "final_sigmas_type", "must be 'zero' or 'sigma_min'");
  refuseOtherSpacings(c);
  refuseIfSet(c, "thresholding", "dynamic thresholding is not elementwise");
  refuseIfSet(c, "use_dynamic_shifting",
              "Wan's pipeline passes no mu to set_timesteps (diffusers raises ValueError)");
  if (c.has("solver_p"))
    failConfig(c, "solver_p", "is set; this dit-run runs UniPC's own predictor");
  std::set<int64_t> disabled;
  if (c.has("disable_corrector")) {
    const json &list = c.raw().at("disable_corrector");
    if (!list.is_array())
      failConfig(c, "disable_corrector", "expected a list of step indices");
    for (const json &v : list) {
      if (!v.is_number_integer())
        failConfig(c, "disable_corrector", "holds " + describeJson(v) +
                                               ", expected step indices");
      disabled.insert(v.get<int64_t>());
    }
  }
  std::string spacing = c.getOptionalString("timestep_spacing").value_or("linspace");
  if (spacing != "linspace" && spacing != "leading" && spacing != "trailing")
    failConfig(c, "timestep_spacing", "must be 'linspace', 'leading' or 'trailing'");

  Schedule s;
  s.scheduler = "UniPCMultistepScheduler";
  std::vector<double> sigmas64; // float64, before the table's float32 cast
  if (r.sigmas) {
    sigmas64 = *r.sigmas;
  } else {
    Table table;
    table.v = linspace(1.0, 1.0 / double(trainSteps), r.steps + 1);
    table.v.pop_back();
    for (double &v : table.v)
      v = flowShift * v / (1.0 + (flowShift - 1.0) * v);
    stretchToTerminal(table, shiftTerminal);
    sigmas64 = table.v;
    if (std::fabs(sigmas64[0] - 1.0) < 1e-6)
      sigmas64[0] -= 1e-6;
    sigmas64.push_back(finalType == "zero" ? 0.0 : sigmas64.back());
  }
  int64_t n = int64_t(sigmas64.size()) - 1;
  for (double v : sigmas64)
    s.sigmas.push_back(float32(v));
  // Every sigma but the last must lie strictly inside (0, 1): log(alpha)
  // and log(sigma) are taken of each.
  for (int64_t i = 0; i <= n; ++i) {
    double v = s.sigmas[size_t(i)];
    bool bad = i < n ? !(v > 0.0 && v < 1.0) : !(v >= 0.0 && v < 1.0);
    if (bad || (i > 0 && v == s.sigmas[size_t(i) - 1]))
      throw BadInput(r.sigmasOrigin + ": sigma " + std::to_string(i) + " is " +
                     describeNumber(v) +
                     "; UniPC in flow mode needs every sigma in (0, 1), the last in "
                     "[0, 1), and no two consecutive sigmas equal");
  }
  if (s.sigmas.back() == 0.0 && (!lowerOrderFinal && order > 1))
    failConfig(c, "lower_order_final",
               "is false, so the last step would run a multistep update to sigma 0, "
               "where diffusers divides by an infinite step and returns NaN");
  if (s.sigmas.back() == 0.0 && solver == "bh1")
    failConfig(c, "solver_type",
               "is 'bh1'; its last step to sigma 0 multiplies an infinite B(h) by "
               "zero, and diffusers returns NaN");

  UniPC u{order, solver == "bh2"};
  // Slots: the model outputs M[0..order-1] (newest last), then the last
  // sample, the new model output and the corrected sample.
  const int last = order, mNew = order + 1, corrected = order + 2;
  s.slots = order + 3;
  auto model = [&](int k) { return order - k; }; // M[-k]
  int previousOrder = 0, lowerOrderNums = 0;
  for (int64_t i = 0; i < n; ++i) {
    ScheduleStep step;
    step.sigma = s.sigmas[size_t(i)];
    step.sigmaNext = s.sigmas[size_t(i) + 1];
    // timesteps = (sigmas * T) in float64, then cast to int64 (truncation).
    step.timestep = double(int64_t(sigmas64[size_t(i)] * double(trainSteps)));
    std::vector<StepInstruction> &code = step.rule.instructions;
    // convert_model_output: x0 = sample - sigma * v.
    code.push_back({mNew, {{kStepLatents, 1.0}, {kStepVelocity, -step.sigma}}});
    bool useCorrector = i > 0 && !disabled.count(i - 1);
    if (useCorrector) {
      std::vector<double> previous; // sigmas[i - 2], sigmas[i - 3], ...
      for (int k = 1; k < previousOrder; ++k)
        previous.push_back(s.sigmas[size_t(i - 1 - k)]);
      UniPC::Update c2 = u.update(step.sigma, s.sigmas[size_t(i) - 1], previous,
                                  previousOrder, /*corrector=*/true);
      StepInstruction corr{corrected, {{last, c2.x}, {model(1), c2.m0}}};
      for (size_t k = 0; k < c2.earlier.size(); ++k)
        corr.terms.push_back({model(int(k) + 2), c2.earlier[k]});
      corr.terms.push_back({mNew, c2.mNew});
      code.push_back(corr);
    } else {
      code.push_back({corrected, {{kStepLatents, 1.0}}});
    }
    for (int k = 0; k + 1 < order; ++k)
      code.push_back({k, {{k + 1, 1.0}}});
    code.push_back({model(1), {{mNew, 1.0}}});
    int thisOrder = lowerOrderFinal ? int(std::min<int64_t>(order, n - i)) : order;
    thisOrder = std::min(thisOrder, lowerOrderNums + 1);
    code.push_back({last, {{corrected, 1.0}}});
    std::vector<double> previous; // sigmas[i - 1], sigmas[i - 2], ...
    for (int k = 1; k < thisOrder; ++k)
      previous.push_back(s.sigmas[size_t(i - k)]);
    UniPC::Update p = u.update(step.sigmaNext, step.sigma, previous, thisOrder,
                               /*corrector=*/false);
    StepInstruction pred{kStepResult, {{corrected, p.x}, {model(1), p.m0}}};
    for (size_t k = 0; k < p.earlier.size(); ++k)
      pred.terms.push_back({model(int(k) + 2), p.earlier[k]});
    code.push_back(pred);
    previousOrder = thisOrder;
    lowerOrderNums = std::min(lowerOrderNums + 1, order);
    s.steps.push_back(step);
  }
  return s;
}

//===----------------------------------------------------------------------===//
// CogVideoXDDIMScheduler
//===----------------------------------------------------------------------===//

Schedule cogVideoXDdim(const JsonObject &c, const ScheduleRequest &r) {
  if (r.sigmas)
    throw BadInput(r.sigmasOrigin + ": " + c.file() +
                   " selects CogVideoXDDIMScheduler, which steps integer timesteps "
                   "and takes no sigmas; drop --sigmas or use a flow-matching config");
  int64_t trainSteps = c.getOptionalInt("num_train_timesteps", 2, 1000000).value_or(1000);
  double betaStart = c.getOptionalDouble("beta_start", 0.00085, 0.0, 1.0);
  double betaEnd = c.getOptionalDouble("beta_end", 0.012, 0.0, 1.0);
  std::string schedule = c.getOptionalString("beta_schedule").value_or("scaled_linear");
  if (c.has("trained_betas"))
    failConfig(c, "trained_betas", "is set; this dit-run derives the betas from beta_schedule");
  std::vector<double> betas;
  if (schedule == "scaled_linear") {
    // float64 torch.linspace of the square roots, squared.
    for (double v : torchLinspace(std::sqrt(betaStart), std::sqrt(betaEnd), trainSteps))
      betas.push_back(v * v);
  } else if (schedule == "linear") {
    for (double v : torchLinspace(betaStart, betaEnd, trainSteps))
      betas.push_back(float32(v));
  } else {
    failConfig(c, "beta_schedule", "must be 'scaled_linear' or 'linear' here");
  }
  double snrShift = c.getOptionalDouble("snr_shift_scale", 3.0, 1e-6, 1e6);
  bool zeroSnr = c.getOptionalBool("rescale_betas_zero_snr", false);
  bool alphaToOne = c.getOptionalBool("set_alpha_to_one", true);
  int64_t stepsOffset = c.getOptionalInt("steps_offset", 0, 1000000).value_or(0);
  std::string prediction = c.getOptionalString("prediction_type").value_or("epsilon");
  if (prediction != "epsilon" && prediction != "v_prediction" && prediction != "sample")
    failConfig(c, "prediction_type", "must be 'epsilon', 'v_prediction' or 'sample'");
  std::string spacing = c.getOptionalString("timestep_spacing").value_or("leading");
  if (spacing != "linspace" && spacing != "leading" && spacing != "trailing")
    failConfig(c, "timestep_spacing", "must be 'linspace', 'leading' or 'trailing'");
  int64_t n = r.steps;
  if (n > trainSteps)
    throw BadInput("the run has " + std::to_string(n) + " steps but " + c.file() +
                   " has num_train_timesteps " + std::to_string(trainSteps) +
                   "; CogVideoXDDIMScheduler steps at most that many");

  std::vector<double> ac(static_cast<size_t>(trainSteps));
  double product = 1.0;
  for (size_t i = 0; i < ac.size(); ++i) {
    product *= 1.0 - betas[i];
    ac[i] = product;
  }
  for (double &a : ac)
    a = a / (snrShift + (1.0 - snrShift) * a);
  if (zeroSnr) {
    double first = std::sqrt(ac.front()), lastRoot = std::sqrt(ac.back());
    for (double &a : ac) {
      double root = (std::sqrt(a) - lastRoot) * (first / (first - lastRoot));
      a = root * root;
    }
  }
  double finalAlpha = alphaToOne ? 1.0 : ac.front();

  std::vector<int64_t> timesteps;
  if (spacing == "linspace") {
    for (double v : linspace(0.0, double(trainSteps - 1), n))
      timesteps.push_back(int64_t(std::nearbyint(v)));
    std::reverse(timesteps.begin(), timesteps.end());
  } else if (spacing == "leading") {
    int64_t ratio = trainSteps / n;
    for (int64_t i = n - 1; i >= 0; --i)
      timesteps.push_back(i * ratio + stepsOffset);
  } else {
    double ratio = double(trainSteps) / double(n);
    // np.arange(T, 0, -ratio): ceil(T / ratio) values start + i * delta,
    // where numpy's delta is (start + step) - start.
    double start = double(trainSteps);
    double delta = (start + -ratio) - start;
    int64_t length = int64_t(std::ceil((0.0 - start) / -ratio));
    for (int64_t i = 0; i < length; ++i) {
      double v = i == 0 ? start : i == 1 ? start + -ratio : start + double(i) * delta;
      timesteps.push_back(int64_t(std::nearbyint(v)) - 1);
    }
  }
  Schedule s;
  s.scheduler = "CogVideoXDDIMScheduler";
  const int x0 = 0;
  s.slots = 1;
  for (int64_t t : timesteps) {
    if (t < 0 || t >= trainSteps)
      throw BadInput(c.file() + ": timestep " + std::to_string(t) +
                     " falls outside [0, num_train_timesteps); check steps_offset");
    int64_t prev = t - trainSteps / n;
    double aT = ac[size_t(t)];
    double aPrev = prev >= 0 ? ac[size_t(prev)] : finalAlpha;
    double beta = 1.0 - aT;
    if (prediction == "epsilon" && aT == 0.0)
      failConfig(c, "prediction_type",
                 "is 'epsilon' with a zero terminal SNR: diffusers divides by "
                 "sqrt(alpha_prod_t) = 0 at timestep " + std::to_string(t));
    ScheduleStep step;
    step.timestep = double(t);
    // The op's sigma inputs carry sqrt(1 - alpha_prod) for the record; the
    // rule below is the update.
    step.sigma = float32(std::sqrt(beta));
    step.sigmaNext = float32(std::sqrt(1.0 - aPrev));
    std::vector<StepInstruction> &code = step.rule.instructions;
    if (prediction == "v_prediction")
      code.push_back({x0, {{kStepLatents, std::sqrt(aT)}, {kStepVelocity, -std::sqrt(beta)}}});
    else if (prediction == "epsilon")
      code.push_back({x0, {{kStepLatents, 1.0 / std::sqrt(aT)},
                           {kStepVelocity, -std::sqrt(beta) / std::sqrt(aT)}}});
    else
      code.push_back({x0, {{kStepVelocity, 1.0}}});
    double a = std::sqrt((1.0 - aPrev) / (1.0 - aT));
    double b = std::sqrt(aPrev) - std::sqrt(aT) * a;
    code.push_back({kStepResult, {{kStepLatents, a}, {x0, b}}});
    s.steps.push_back(step);
  }
  return s;
}
/// A config can still drive the arithmetic out of range (betas of 1, a
/// shift_terminal that divides by zero, an overflowing mu); such a schedule
/// is refused rather than run to NaN latents.
void checkFinite(const Schedule &s, const JsonObject &c) {
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const ScheduleStep &step = s.steps[i];
    bool finite = std::isfinite(step.sigma) && std::isfinite(step.sigmaNext) &&
                  std::isfinite(step.timestep);
    for (const StepInstruction &instruction : step.rule.instructions)
      for (const StepTerm &term : instruction.terms)
        finite = finite && std::isfinite(term.coeff);
    if (!finite)
      throw BadInput(c.file() + ": gives a non-finite sigma, timestep or step "
                                "coefficient at step " +
                     std::to_string(i) + " of " + std::to_string(s.steps.size()) +
                     "; its values drive " + s.scheduler +
                     "'s arithmetic out of range");
  }
}
} // namespace

double guidanceInput(const std::string &family, double guidanceScale) {
  if (family == "hunyuan_video")
    return double(float(guidanceScale) * 1000.0f);
  return guidanceScale;
}

std::vector<double> parseSigmas(const std::string &text, const std::string &flag) {
  std::vector<double> values;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(start, end - start);
    size_t used = 0;
    double v = 0;
    bool ok = !item.empty() && item.find_first_of(" \t") == std::string::npos;
    if (ok) {
      try {
        v = std::stod(item, &used);
      } catch (const std::exception &) {
        ok = false;
      }
    }
    if (!ok || used != item.size() || !std::isfinite(v))
      throw BadInput(flag + ": entry " + std::to_string(values.size()) + " is '" +
                     escapeInvalidUtf8(item) +
                     "'; expected comma-separated finite numbers s0,s1,...,sK");
    if (v < 0.0 || v > 1.0)
      throw BadInput(flag + ": entry " + std::to_string(values.size()) + " is " + item +
                     "; flow-matching sigmas lie in [0, 1]");
    values.push_back(v);
    if (int64_t(values.size()) > kMaxSteps + 1)
      throw BadInput(flag + ": holds more than " + std::to_string(kMaxSteps + 1) +
                     " sigmas; at most 100000 steps");
    start = end + 1;
  }
  if (values.size() < 2)
    throw BadInput(flag + ": holds " + std::to_string(values.size()) +
                   " sigma; K steps need K + 1 sigmas s0,...,sK (at least 2)");
  return values;
}

std::string schedulerConfigIn(const std::string &dir) {
  std::string path = dir + "/scheduler/scheduler_config.json";
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 ? path : std::string();
}

Schedule buildSchedule(const ScheduleRequest &request) {
  if (!request.configPath.empty()) {
    json raw = JsonObject::parseFile(request.configPath);
    JsonObject c(escapeInvalidUtf8(request.configPath), &raw);
    std::string cls = c.getString("_class_name");
    Schedule s;
    if (cls == "FlowMatchEulerDiscreteScheduler")
      s = flowMatchEuler(c, request);
    else if (cls == "UniPCMultistepScheduler")
      s = uniPC(c, request);
    else if (cls == "CogVideoXDDIMScheduler")
      s = cogVideoXDdim(c, request);
    else
      c.fail("_class_name",
             "is '" + escapeInvalidUtf8(cls) +
                 "', a scheduler this dit-run does not reproduce; expected "
             "FlowMatchEulerDiscreteScheduler, UniPCMultistepScheduler or "
             "CogVideoXDDIMScheduler");
    s.source = c.file();
    checkFinite(s, c);
    return s;
  }
  Schedule s;
  if (request.sigmas) {
    s.scheduler = "--sigmas";
    s.source = request.sigmasOrigin;
    for (double v : *request.sigmas)
      s.sigmas.push_back(float32(v));
    for (size_t i = 0; i + 1 < s.sigmas.size(); ++i) {
      ScheduleStep step;
      step.sigma = s.sigmas[i];
      step.sigmaNext = s.sigmas[i + 1];
      step.timestep = float32(float(step.sigma) * 1000.0f);
      s.steps.push_back(step);
    }
    return s;
  }
  // No scheduler: sigmas fall linearly from 1 to 0 (numpy.linspace).
  s.scheduler = "linear";
  s.source = "the linear schedule (no scheduler config)";
  int64_t k = request.steps;
  double delta = -1.0 / double(k);
  for (int64_t i = 0; i <= k; ++i)
    s.sigmas.push_back(i == k ? 0.0 : 1.0 + double(i) * delta);
  for (int64_t i = 0; i < k; ++i) {
    ScheduleStep step;
    step.sigma = s.sigmas[size_t(i)];
    step.sigmaNext = s.sigmas[size_t(i) + 1];
    step.timestep = step.sigma * 1000.0;
    s.steps.push_back(step);
  }
  return s;
}

} // namespace ditc::runtime
