//===- Diffusers.cpp - diffusers' ParallelConfig, as JSON -----------------===//
//
// diffusers is configured in Python: a ContextParallelConfig (ring_degree,
// ulysses_degree), a TensorParallelConfig (tp_degree), or a ParallelConfig
// holding one of them, passed to enable_parallelism() or from_pretrained().
// ditc reads the config as JSON, {"ContextParallelConfig": {...}}, with
// two keys of its own: "world_size" (the torchrun processes; the product
// of the degrees when absent) and "attention_backend" (diffusers' default
// is "native"). Sources are at commit 58eb52c (docs/engines.md).
//
// diffusers' ring all-gathers K/V (rotate_method "allgather", the only
// one it accepts) and merges the chunks by their softmax LSE: that is
// ditc's kv_gather, so ring_degree reads as kv_gather. Every rank runs
// both guidance branches, and replicas are launched outside diffusers, so
// cfg, dp and pp are 1.
//
//===----------------------------------------------------------------------===//
#include "Engines.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/Spelling.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace ditc::engines {

using nlohmann::json;

namespace {

/// Transformer classes with a _cp_plan / _tp_plan at the commit, by ditc
/// family (src/diffusers/models/transformers/*.py).
bool hasContextParallelPlan(const std::string &family) {
  return family == "flux" || family == "wan" || family == "qwen_image" ||
         family == "ltx_video";
}
bool hasTensorParallelPlan(const std::string &family) {
  return family == "flux" || family == "qwen_image";
}
/// Families whose context-parallel plan also splits the text tokens.
bool splitsText(const std::string &family) {
  return family == "flux" || family == "qwen_image" || family == "ltx_video";
}

/// Backends registered with supports_context_parallel
/// (attention_dispatch.py:2984-4263), and those that return no LSE, so
/// that ring fails in the first forward.
const std::vector<std::string> &contextParallelBackends() {
  static const std::vector<std::string> names = {
      "flash",         "flash_hub",         "flash_varlen_hub", "_flash_3_hub",
      "_flash_3_varlen_hub", "native",      "_native_cudnn",    "_native_flash",
      "_native_npu",   "sage",              "sage_hub"};
  return names;
}
bool backendWithoutLse(const std::string &backend) {
  return backend == "native" || backend == "_native_npu";
}

class Diffusers final : public Engine {
public:
  std::string name() const override { return "diffusers"; }
  std::string title() const override { return "diffusers"; }
  std::string repository() const override { return "huggingface/diffusers"; }
  std::string commit() const override { return "58eb52c0803ea9af3abec60841c2a093bdf1f951"; }

  const std::vector<EngineRule> &rules() const override {
    static const std::vector<EngineRule> table = {
        {"diffusers-cp-trivial", "a ContextParallelConfig has ring or ulysses above 1",
         "src/diffusers/models/_modeling_parallel.py:106-109"},
        {"diffusers-degree", "degrees are at least 1",
         "src/diffusers/models/_modeling_parallel.py:110-111,185-186"},
        {"diffusers-rotate-method", "rotate_method is 'allgather'",
         "src/diffusers/models/_modeling_parallel.py:112-115"},
        {"diffusers-anything", "ulysses_anything needs ulysses > 1 and ring 1; "
                               "ring_anything needs ring > 1 and ulysses 1",
         "src/diffusers/models/_modeling_parallel.py:116-127"},
        {"diffusers-cp-tp", "one ParallelConfig holds context or tensor parallelism, not both",
         "src/diffusers/models/_modeling_parallel.py:217-221"},
        {"diffusers-world-size", "ring x ulysses (or tp) does not exceed the world size",
         "src/diffusers/models/_modeling_parallel.py:144-147"},
        {"diffusers-cp-plan", "context parallelism needs the transformer's _cp_plan",
         "src/diffusers/models/modeling_utils.py:1607-1720"},
        {"diffusers-tp-plan", "tensor parallelism needs the transformer's _tp_plan",
         "src/diffusers/models/modeling_utils.py:1700-1720"},
        {"diffusers-backend", "the attention backend supports context parallelism",
         "src/diffusers/models/modeling_utils.py:1640-1666"},
        {"diffusers-ring-lse", "ring needs a backend that returns the softmax LSE "
                               "(native and _native_npu do not)",
         "src/diffusers/models/attention_dispatch.py:833-835"},
        {"diffusers-text-split",
         "the text tokens that the model's _cp_plan splits divide by ring x ulysses",
         "src/diffusers/hooks/context_parallel.py:274-276"},
        {"diffusers-axes", "diffusers has no cfg, dp or pp axis and no rotating ring",
         "src/diffusers/models/_modeling_parallel.py:34-37"},
        {"diffusers-rank-order",
         "the context-parallel mesh is (ring, ulysses), row-major: Ulysses groups are "
         "contiguous ranks (ditc's kv_gather is diffusers' ring)",
         "src/diffusers/models/_modeling_parallel.py:129-136; "
         "src/diffusers/models/modeling_utils.py:1668-1675"},
    };
    return table;
  }

  EngineReading read(const std::vector<std::string> &words,
                     const ModelSpec &) const override {
    const std::string where = "diffusers config";
    if (words.size() != 1)
      throw BadInput(where + ": expected one word, the config as JSON (such as '{\"ContextParallelConfig\": {\"ulysses_degree\": 2}}'), got " +
                     std::to_string(words.size()));
    json config = JsonObject::parseText(words[0], where);
    if (!config.is_object())
      throw BadInput(where + ": is " + describeJson(config) + ", expected a JSON object");
    EngineReading reading;
    static const std::vector<std::string> topKeys = {
        "ContextParallelConfig", "TensorParallelConfig", "ParallelConfig", "world_size",
        "attention_backend"};
    json cp, tp;
    int configs = 0;
    for (auto it = config.begin(); it != config.end(); ++it) {
      const std::string &key = it.key();
      if (std::find(topKeys.begin(), topKeys.end(), key) == topKeys.end())
        throw BadInput(where + ": unknown key '" + key + "'" +
                       nearestAndKnown(key, topKeys, "allowed"));
      if (key == "ContextParallelConfig")
        cp = *it, ++configs;
      else if (key == "TensorParallelConfig")
        tp = *it, ++configs;
      else if (key == "ParallelConfig") {
        ++configs;
        if (!it->is_object())
          throw BadInput(where + ": ParallelConfig is " + describeJson(*it) +
                         ", expected an object");
        for (auto field = it->begin(); field != it->end(); ++field) {
          if (field.key() == "context_parallel_config")
            cp = *field;
          else if (field.key() == "tensor_parallel_config")
            tp = *field;
          else
            throw BadInput(where + ": ParallelConfig.__init__() got an unexpected keyword "
                                  "argument '" + field.key() + "'" +
                           nearestAndKnown(field.key(),
                                           {"context_parallel_config", "tensor_parallel_config"},
                                           "allowed"));
        }
      }
    }
    if (configs != 1)
      throw BadInput(where + ": give exactly one of ContextParallelConfig, "
                             "TensorParallelConfig or ParallelConfig (got " +
                     std::to_string(configs) + ")");
    auto field = [&](const json &object, const std::string &key) -> const json * {
      auto it = object.find(key);
      return it == object.end() || it->is_null() ? nullptr : &*it;
    };
    auto integer = [&](const json &object, const std::string &owner,
                       const std::string &key) {
      return jsonInteger(field(object, key), where + ": " + owner + "." + key);
    };
    auto boolean = [&](const json &object, const std::string &owner, const std::string &key) {
      const json *value = field(object, key);
      if (!value)
        return false;
      if (!value->is_boolean())
        throw BadInput(where + ": " + owner + "." + key + " is " + describeJson(*value) +
                       ", expected true or false");
      return value->get<bool>();
    };
    auto checkKeys = [&](const json &object, const std::string &owner,
                         const std::vector<std::string> &known) {
      if (!object.is_object())
        throw BadInput(where + ": " + owner + " is " + describeJson(object) +
                       ", expected an object");
      for (auto it = object.begin(); it != object.end(); ++it)
        if (std::find(known.begin(), known.end(), it.key()) == known.end())
          throw BadInput(where + ": " + owner + ".__init__() got an unexpected keyword "
                                                "argument '" + it.key() + "'" +
                         nearestAndKnown(it.key(), known, "allowed"));
    };
    int64_t ring = 1, ulysses = 1, tpDegree = 1;
    if (!cp.is_null()) {
      checkKeys(cp, "ContextParallelConfig",
                {"ring_degree", "ulysses_degree", "convert_to_fp32", "rotate_method", "mesh",
                 "ulysses_anything", "ring_anything"});
      if (field(cp, "mesh"))
        throw BadInput(where + ": ContextParallelConfig.mesh: a custom DeviceMesh is not "
                               "something ditc can read; give the degrees");
      ring = integer(cp, "ContextParallelConfig", "ring_degree").value_or(1);
      ulysses = integer(cp, "ContextParallelConfig", "ulysses_degree").value_or(1);
      boolean(cp, "ContextParallelConfig", "convert_to_fp32");
      bool ulyssesAnything = boolean(cp, "ContextParallelConfig", "ulysses_anything");
      bool ringAnything = boolean(cp, "ContextParallelConfig", "ring_anything");
      // __post_init__'s checks, in its order (the first failure wins).
      std::string rotate = "allgather";
      if (const json *method = field(cp, "rotate_method")) {
        if (!method->is_string())
          throw BadInput(where + ": ContextParallelConfig.rotate_method is " +
                         describeJson(*method) + ", expected a string");
        rotate = method->get<std::string>();
      }
      if (ring == 1 && ulysses == 1)
        reading.refusals.push_back(
            {"diffusers-cp-trivial", "Either ring_degree or ulysses_degree must be greater "
                                     "than 1 in order to use context parallel inference"});
      else if (ring < 1 || ulysses < 1)
        reading.refusals.push_back({"diffusers-degree", "`ring_degree` and `ulysses_degree` "
                                                        "must be greater than or equal to 1."});
      else if (rotate != "allgather")
        reading.refusals.push_back(
            {"diffusers-rotate-method",
             "Only rotate_method='allgather' is supported for now, but got " + rotate + "."});
      else if (ulyssesAnything && (ulysses == 1 || ring > 1))
        reading.refusals.push_back(
            {"diffusers-anything", ulysses == 1
                                       ? "ulysses_degree must be greater than 1 for "
                                         "ulysses_anything to be enabled."
                                       : "ulysses_anything cannot be enabled when "
                                         "ring_degree > 1."});
      else if (ringAnything && (ring == 1 || ulysses > 1))
        reading.refusals.push_back(
            {"diffusers-anything", ring == 1 ? "ring_degree must be greater than 1 for "
                                               "ring_anything to be enabled."
                                             : "ring_anything cannot be enabled when "
                                               "ulysses_degree > 1."});
      if (ulyssesAnything || ringAnything)
        reading.derivations.push_back(
            "ulysses_anything / ring_anything split uneven sequences; ditc splits evenly, "
            "so seq-divisibility still holds it to even splits");
      if (ring > 1)
        reading.derivations.push_back(
            "kv_gather " + std::to_string(ring) +
            " from ring_degree: diffusers' ring all-gathers K/V (rotate_method allgather) "
            "and merges by LSE, which is ditc's kv_gather");
      if (ring > 1 && ulysses > 1)
        reading.derivations.push_back("ring and ulysses together run as diffusers' unified "
                                      "attention: ulysses x kv_gather in ditc");
    }
    if (!tp.is_null()) {
      checkKeys(tp, "TensorParallelConfig", {"tp_degree", "mesh"});
      if (field(tp, "mesh"))
        throw BadInput(where + ": TensorParallelConfig.mesh: a custom DeviceMesh is not "
                               "something ditc can read; give tp_degree");
      tpDegree = integer(tp, "TensorParallelConfig", "tp_degree").value_or(1);
      if (tpDegree < 1)
        reading.refusals.push_back({"diffusers-degree", "`tp_degree` must be >= 1."});
    }
    if (!cp.is_null() && !tp.is_null())
      reading.refusals.push_back(
          {"diffusers-cp-tp", "Combining context parallelism and tensor parallelism in a "
                              "single `ParallelConfig` is not supported."});
    int64_t degrees = product({std::max<int64_t>(ring, 1), std::max<int64_t>(ulysses, 1),
                               std::max<int64_t>(tpDegree, 1)});
    int64_t world = degrees;
    if (std::optional<int64_t> given =
            jsonInteger(field(config, "world_size"), where + ": world_size", 1, 1 << 20,
                        "the number of torchrun processes (1 to 1048576)")) {
      world = *given;
    } else {
      reading.derivations.push_back("world " + std::to_string(world) +
                                    ": no world_size, so the product of the degrees");
    }
    if (degrees > world)
      reading.refusals.push_back(
          {"diffusers-world-size", "The product of `ring_degree` (" + std::to_string(ring) +
                                       ") and `ulysses_degree` (" + std::to_string(ulysses) +
                                       ") must not exceed the world size (" +
                                       std::to_string(world) + ")."});
    if (const json *backend = field(config, "attention_backend")) {
      if (!backend->is_string())
        throw BadInput(where + ": attention_backend is " + describeJson(*backend) +
                       ", expected a backend name");
      reading.attentionBackend = backend->get<std::string>();
    }
    reading.derivations.push_back("cfg 1: every rank runs both guidance branches (diffusers "
                                  "has no CFG parallel axis)");
    reading.flags.numGpus = world;
    reading.flags.ulysses = std::max<int64_t>(ulysses, 1);
    reading.flags.kvGather = std::max<int64_t>(ring, 1);
    reading.flags.tp = std::max<int64_t>(tpDegree, 1);
    return reading;
  }

  std::vector<EngineFinding> check(const EngineTarget &target) const override {
    std::vector<EngineFinding> findings;
    const Degrees &d = target.deployment.find("transformer")->degrees;
    std::string family = familyOf(target.spec);
    int64_t cp = d[Axis::Ulysses] * d[Axis::KVGather] * d[Axis::Ring];
    if (cp > 1 && !hasContextParallelPlan(family))
      findings.push_back({"diffusers-cp-plan", target.spec.className +
                                                   " has no _cp_plan, so diffusers cannot "
                                                   "split its sequence"});
    if (d[Axis::TP] > 1 && !hasTensorParallelPlan(family))
      findings.push_back({"diffusers-tp-plan", target.spec.className +
                                                   " has no _tp_plan, so diffusers cannot "
                                                   "split its weights"});
    std::string backend = target.attentionBackend.value_or("native");
    const std::vector<std::string> &capable = contextParallelBackends();
    if (cp > 1 && std::find(capable.begin(), capable.end(), backend) == capable.end())
      findings.push_back({"diffusers-backend",
                          "the attention backend '" + backend +
                              "' does not support context parallelism" +
                              nearestAndKnown(backend, capable, "those that do")});
    else if (d[Axis::KVGather] > 1 && backendWithoutLse(backend))
      findings.push_back({"diffusers-ring-lse",
                          "Native attention does not support return_lse=True: ring_degree " +
                              std::to_string(d[Axis::KVGather]) + " with the '" + backend +
                              "' backend fails in the first forward (set a backend such as "
                              "'flash' or '_native_cudnn')"});
    if (cp > 1 && splitsText(family) && target.workload.textTokens % cp != 0)
      findings.push_back({"diffusers-text-split",
                          "Tensor size along dimension to be sharded must be divisible by "
                          "mesh size: " + std::to_string(target.workload.textTokens) +
                              " text tokens over ring x ulysses = " + std::to_string(cp)});
    if (d[Axis::CFG] > 1 || d[Axis::PP] > 1 || d[Axis::DP] > 1 || d[Axis::Ring] > 1) {
      std::string axes;
      for (Axis axis : {Axis::CFG, Axis::PP, Axis::DP, Axis::Ring})
        if (d[axis] > 1)
          axes += std::string(axes.empty() ? "" : ", ") + axisName(axis) + " " +
                  std::to_string(d[axis]);
      findings.push_back({"diffusers-axes",
                          axes + ": diffusers runs every guidance branch on each rank, "
                                 "leaves replicas to the launcher, has no pipeline stages, "
                                 "and its ring gathers K/V (ditc's kv_gather)"});
    }
    if (d[Axis::TP] > 1 && cp > 1)
      findings.push_back({"diffusers-cp-tp", "Combining context parallelism and tensor "
                                             "parallelism in a single `ParallelConfig` is "
                                             "not supported."});
    return findings;
  }

  // A K/V split is emitted with a backend that returns the LSE.
  EngineTarget emittedTarget(const EngineTarget &given) const override {
    EngineTarget target = given;
    if (!target.attentionBackend &&
        target.deployment.find("transformer")->degrees[Axis::KVGather] > 1)
      target.attentionBackend = "flash";
    return target;
  }

  EmittedLaunch launchLine(const EngineTarget &target,
                           std::vector<EngineFinding> &refusals) const override {
    if (target.deployment.numGpus != target.deployment.find("transformer")->degrees.worldSize())
      refusals.push_back({"diffusers-axes", "the deployment holds ranks beyond the "
                                            "transformer's"});
    if (!refusals.empty())
      return {};
    const Degrees &d = target.deployment.find("transformer")->degrees;
    json config = json::object();
    if (d[Axis::TP] > 1) {
      config["ParallelConfig"] = {{"tensor_parallel_config", {{"tp_degree", d[Axis::TP]}}}};
    } else if (d[Axis::Ulysses] * d[Axis::KVGather] > 1) {
      json cp = json::object();
      if (d[Axis::Ulysses] > 1)
        cp["ulysses_degree"] = d[Axis::Ulysses];
      if (d[Axis::KVGather] > 1)
        cp["ring_degree"] = d[Axis::KVGather];
      config["ParallelConfig"] = {{"context_parallel_config", cp}};
      if (d[Axis::KVGather] > 1)
        config["attention_backend"] = *target.attentionBackend;
    } else {
      config["ParallelConfig"] = json::object();
    }
    config["world_size"] = target.deployment.numGpus;
    std::string text = config.dump();
    return {{text}, shellLine({text}), {}};
  }
};

} // namespace

const Engine &diffusersEngine() {
  static const Diffusers engine;
  return engine;
}

} // namespace ditc::engines
