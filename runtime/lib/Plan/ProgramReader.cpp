//===- ProgramReader.cpp - a plan's programs, decoded and checked ---------===//
#include "ditc/Runtime/Plan/ProgramReader.h"
#include "ditc/Runtime/Plan/PlanFile.h"
#include "ditc/Runtime/Plan/PlanValidator.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Utf8.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/PlanFormat.h"
#include "ditc/Support/ReadFile.h"
#include "ditc/Support/Sha256.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace ditc::runtime {

using nlohmann::json;

namespace {
/// Reads one function (or a program's top level): value shapes, value ids,
/// and every op with its attributes decoded into OpAttrs. Types and ranges
/// are checked here; validateProgram then checks the shapes.
class FunctionReader {
public:
  FunctionReader(const Manifest &manifest, const std::string &file)
      : manifest(manifest), file(file) {}

  Function read(const JsonObject &object, const std::string &name,
                const std::string &resultsField) {
    Function fn;
    fn.name = name;
    const json &values = requireList(object, "values");
    for (size_t i = 0; i < values.size(); ++i) {
      JsonObject v = element(object, "values", i);
      std::vector<int64_t> shape;
      if (!v.has("shape") || !v.raw()["shape"].is_array())
        v.fail("shape", "is missing or not a list");
      const json &dims = v.raw()["shape"];
      if (dims.size() > 8)
        v.fail("shape", "has " + std::to_string(dims.size()) +
                            " dimensions; plans use at most 8");
      int64_t elements = 1;
      for (const json &d : dims) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0 ||
            d.get<int64_t>() > kMaxValueElements)
          v.fail("shape", "holds " + describeJson(d) + ", expected a size in [0, " +
                              std::to_string(kMaxValueElements) + "]");
        shape.push_back(d.get<int64_t>());
        // Both factors are at most 2^31, so the product cannot overflow.
        elements = std::min(elements * std::max<int64_t>(d.get<int64_t>(), 0),
                            kMaxValueElements + 1);
      }
      if (elements > kMaxValueElements)
        v.fail("shape", "holds more than " + std::to_string(kMaxValueElements) +
                            " elements, more than any rank can compute");
      fn.valueShapes.push_back(shape);
    }
    if (object.has("args"))
      fn.args = ids(object, "args", fn);
    fn.results = ids(object, resultsField, fn);
    const json &ops = requireList(object, "ops");
    for (size_t i = 0; i < ops.size(); ++i)
      fn.ops.push_back(readOp(element(object, "ops", i), fn));
    return fn;
  }

private:
  std::vector<int> ids(const JsonObject &object, const std::string &field,
                       const Function &fn) {
    if (fn.valueShapes.empty() && object.has(field) &&
        object.raw()[field].is_array() && !object.raw()[field].empty())
      object.fail(field, "names values, but the function declares none");
    std::vector<int> out;
    for (int64_t id : object.getIntList(field, 0, int64_t(fn.valueShapes.size()) - 1))
      out.push_back(int(id));
    return out;
  }

  Op readOp(const JsonObject &object, const Function &fn) {
    Op op;
    op.name = object.getString("op");
    // The op table (PlanOps.def) names every op a plan may hold.
    std::optional<OpKind> kind = planOpKind(op.name);
    if (!kind)
      object.fail("op", "is '" + escapeInvalidUtf8(op.name.substr(0, 80)) +
                            "', which this dit-run cannot execute");
    op.kind = *kind;
    if (object.has("in"))
      op.inputs = ids(object, "in", fn);
    if (object.has("out"))
      op.outputs = ids(object, "out", fn);
    static const json empty = json::object();
    const json &raw = object.has("attrs") ? object.raw()["attrs"] : empty;
    if (!raw.is_object())
      object.fail("attrs", "is " + describeJson(raw) + ", expected an object");
    if (op.kind == OpKind::Call)
      op.callee = object.getString("callee");
    if (object.has("params")) {
      const json &params = requireList(object, "params");
      for (size_t i = 0; i < params.size(); ++i)
        op.params.push_back(readParam(element(object, "params", i)));
    }
    JsonObject attrs(file, &raw, object.keyPath("attrs") + ".");
    decodeAttrs(op, attrs);
    return op;
  }

  std::vector<std::string> axisList(const JsonObject &attrs,
                                    const std::string &field) {
    std::vector<std::string> out;
    if (!attrs.has(field) || !attrs.raw()[field].is_array() ||
        attrs.raw()[field].empty())
      attrs.fail(field, "is missing or not a non-empty list of axis names");
    for (const json &a : attrs.raw()[field]) {
      if (!a.is_string() ||
          std::find(std::begin(kAxisNames), std::end(kAxisNames),
                    a.get<std::string>()) == std::end(kAxisNames))
        attrs.fail(field, "names " + describeJson(a) +
                              ", not one of dp, cfg, pp, ring, kv_gather, "
                              "ulysses, tp");
      if (std::count(out.begin(), out.end(), a.get<std::string>()))
        attrs.fail(field, "names '" + a.get<std::string>() + "' twice");
      out.push_back(a.get<std::string>());
    }
    return out;
  }

  static bool textPrefix(const JsonObject &attrs, bool required) {
    if (!required && !attrs.has("text_position"))
      return true;
    std::string position = attrs.getString("text_position");
    if (position != "prefix" && position != "suffix")
      attrs.fail("text_position", "is '" + escapeInvalidUtf8(position) +
                                      "'; expected prefix or suffix");
    return position == "prefix";
  }

  /// A send's destination or a receive's source: one in-group index.
  static int64_t peerIndex(const JsonObject &attrs, const std::string &field) {
    std::vector<int64_t> peer = attrs.getIntList(field, 0, 1 << 20);
    if (peer.size() != 1)
      attrs.fail(field, "lists " + std::to_string(peer.size()) +
                            " indices; expected one in-group index");
    return peer[0];
  }

  static std::array<int64_t, 3> triple(const JsonObject &attrs,
                                       const std::string &field, int64_t min,
                                       int64_t max) {
    std::vector<int64_t> list = attrs.getIntList(field, min, max);
    if (list.size() != 3)
      attrs.fail(field, "has " + std::to_string(list.size()) +
                            " entries, expected 3");
    return {list[0], list[1], list[2]};
  }

  /// Three finite positive numbers (rope's coordinate_scale).
  static std::array<double, 3> positiveTriple(const JsonObject &attrs,
                                              const std::string &field) {
    const nlohmann::json &value = attrs.raw().at(field);
    if (!value.is_array() || value.size() != 3)
      attrs.fail(field, "is " + describeJson(value) +
                            ", expected a list of 3 positive numbers");
    std::array<double, 3> out{};
    for (size_t i = 0; i < 3; ++i) {
      const nlohmann::json &entry = value[i];
      double v = entry.is_number() ? entry.get<double>() : -1.0;
      if (!(v > 0) || !std::isfinite(v))
        attrs.failAt(field + "[" + std::to_string(i) + "]", &entry,
                     "is " + describeJson(entry) +
                         ", expected a finite positive number");
      out[i] = v;
    }
    return out;
  }

  /// Three finite reals of magnitude at most 1e6, or `fallback` when the
  /// attribute is absent.
  static std::array<double, 3> realTriple(const JsonObject &attrs,
                                          const std::string &field,
                                          std::array<double, 3> fallback) {
    if (!attrs.has(field))
      return fallback;
    const json &list = attrs.raw()[field];
    if (!list.is_array() || list.size() != 3)
      attrs.fail(field, "is " + describeJson(list) + ", expected 3 numbers");
    std::array<double, 3> out{};
    for (size_t i = 0; i < 3; ++i) {
      const json &v = list[i];
      if (!v.is_number() || !std::isfinite(v.get<double>()) ||
          std::fabs(v.get<double>()) > 1e6)
        attrs.fail(field, "holds " + describeJson(v) +
                              ", expected a number in [-1e6, 1e6]");
      out[i] = v.get<double>();
    }
    return out;
  }

  void decodeAttrs(Op &op, const JsonObject &attrs) {
    OpAttrs &a = op.a;
    constexpr int64_t kDims = 8; // axes index value shapes of at most 8 dims
    a.block = attrs.getOptionalInt("dit.block", 0, kAbsurdSize).value_or(-1);
    op.betweenSteps = attrs.getOptionalBool("dit.between_steps", false);
    switch (op.kind) {
    case OpKind::PatchEmbed: {
      std::vector<int64_t> patch = attrs.getIntList("patch", 1, 64);
      if (patch.size() != 3)
        attrs.fail("patch", "has " + std::to_string(patch.size()) +
                                " entries, expected [t, h, w]");
      if (!channelsFirst(attrs, "features", attrs.getOptionalString("features")))
        a.patchVolume = patch[0] * patch[1] * patch[2];
      if (attrs.has("pos_embed_max_size")) {
        a.posEmbedMaxSize = attrs.getInt("pos_embed_max_size", 1, 1 << 16);
        a.grid = triple(attrs, "grid", 1, kMaxValueElements);
        a.sequenceShards =
            attrs.getOptionalInt("sequence_shards", 1, 1 << 20).value_or(1);
      }
      break;
    }
    case OpKind::TimestepEmbedding:
      a.freqDim = attrs.getInt("freq_dim", 2, 1 << 20);
      if (a.freqDim % 2)
        attrs.fail("freq_dim", "is " + std::to_string(a.freqDim) +
                                   "; the sinusoidal embedding needs an even size");
      a.timestepScale = attrs.getOptionalDouble("scale", 1.0, 1e-6, 1e6);
      break;
    case OpKind::AdalnModulation:
      a.table = attrs.getOptionalBool("table", false);
      a.numChunks = attrs.getInt("num_chunks", 1, 64);
      break;
    case OpKind::Modulate:
      a.scaleChunk = attrs.getInt("scale", 0, 63);
      a.shiftChunk = attrs.getOptionalInt("shift", 0, 63).value_or(-1);
      break;
    case OpKind::ResidualAdd:
      a.gateChunk = attrs.getOptionalInt("gate_chunk", 0, 63).value_or(-1);
      a.tanhGate = attrs.getOptionalBool("tanh_gate", false);
      break;
    case OpKind::LayerNorm:
    case OpKind::RmsNorm:
      a.affine = attrs.getOptionalBool("affine", false);
      a.eps = attrs.getOptionalDouble("eps", -1.0, 0.0, 1.0);
      if (a.eps < 0)
        attrs.fail("eps", "is missing; expected a number in [0, 1]");
      a.groupSize = attrs.getOptionalInt("group_size", 1, kMaxValueElements).value_or(0);
      if (attrs.has("dit.reduce_stats_over"))
        op.axes = axisList(attrs, "dit.reduce_stats_over");
      break;
    case OpKind::Rope:
      a.numHeads = attrs.getInt("num_heads", 1, 1 << 16);
      a.textTokens = attrs.getInt("text_tokens", 0, kMaxValueElements);
      a.textPrefix = textPrefix(attrs, false);
      a.grid = triple(attrs, "grid", 1, kMaxValueElements);
      a.axesDims = triple(attrs, "axes_dims", 0, 1 << 16);
      a.theta = attrs.getOptionalDouble("theta", -1.0, 1e-6, 1e12);
      if (a.theta < 0)
        attrs.fail("theta", "is missing; expected a number in [1e-06, 1e+12]");
      a.sequenceShards = attrs.getOptionalInt("sequence_shards", 1, 1 << 20).value_or(1);
      if (attrs.has("style")) {
        std::string style = attrs.getString("style");
        if (style != "axes" && style != "ltx")
          attrs.fail("style", "is '" + escapeInvalidUtf8(style) +
                                  "'; expected axes or ltx");
        a.ropeLtx = style == "ltx";
      }
      if (a.ropeLtx) {
        if (!attrs.has("coordinate_scale"))
          attrs.fail("coordinate_scale", "is missing; an ltx rope needs 3 "
                                         "positive numbers");
        a.coordinateScale = positiveTriple(attrs, "coordinate_scale");
        a.headShards = attrs.getOptionalInt("head_shards", 1, 1 << 20).value_or(1);
      } else if (attrs.has("coordinate_scale") || attrs.has("head_shards")) {
        attrs.fail(attrs.has("coordinate_scale") ? "coordinate_scale" : "head_shards",
                   "belongs to the ltx rope style; this rope has style axes");
      }
      a.centered = attrs.getOptionalBool("centered", false);
      a.gridOffset = realTriple(attrs, "grid_offset", {0, 0, 0});
      a.gridStep = realTriple(attrs, "grid_step", {1, 1, 1});
      break;
    case OpKind::AttentionPool:
      a.numHeads = attrs.getInt("num_heads", 1, 1 << 16);
      break;
    case OpKind::SincosPosEmbed:
      a.grid = triple(attrs, "grid", 1, kMaxValueElements);
      a.spatialScale = attrs.getOptionalDouble("spatial_scale", -1.0, 1e-6, 1e6);
      a.temporalScale = attrs.getOptionalDouble("temporal_scale", -1.0, 1e-6, 1e6);
      if (a.spatialScale < 0 || a.temporalScale < 0)
        attrs.fail(a.spatialScale < 0 ? "spatial_scale" : "temporal_scale",
                   "is missing; expected a number in [1e-06, 1e+06]");
      a.sequenceShards = attrs.getOptionalInt("sequence_shards", 1, 1 << 20).value_or(1);
      break;
    case OpKind::Attention:
      a.numHeads = attrs.getInt("num_heads", 1, 1 << 16);
      a.textTokens = attrs.getOptionalInt("text_tokens", 0, kMaxValueElements).value_or(0);
      a.textPrefix = textPrefix(attrs, false);
      a.keyMask = attrs.getOptionalBool("key_mask", false);
      a.overlapHeadGroups =
          attrs.getOptionalInt("overlap_head_groups", 2, 1 << 16).value_or(1);
      if (attrs.has("dit.ring_axis")) {
        std::string axis = attrs.getString("ring_axis_name");
        if (std::find(std::begin(kAxisNames), std::end(kAxisNames), axis) ==
            std::end(kAxisNames))
          attrs.fail("ring_axis_name", "is '" + escapeInvalidUtf8(axis) +
                                           "', not a mesh axis");
        op.axes = {axis};
      }
      break;
    case OpKind::Activation: {
      static const std::map<std::string, ActivationKind> kinds = {
          {"gelu", ActivationKind::Gelu}, {"gelu_tanh", ActivationKind::GeluTanh},
          {"silu", ActivationKind::Silu}, {"swiglu", ActivationKind::SwiGlu},
          {"geglu", ActivationKind::GeGlu}};
      std::string kind = attrs.getString("kind");
      auto it = kinds.find(kind);
      if (it == kinds.end())
        attrs.fail("kind", "is '" + escapeInvalidUtf8(kind) +
                               "'; expected gelu, gelu_tanh, silu, swiglu or geglu");
      a.activation = it->second;
      break;
    }
    case OpKind::ConcatStreams:
    case OpKind::SplitStreams:
      a.textPrefix = textPrefix(attrs, true);
      break;
    case OpKind::TensorConcat:
      a.axis = attrs.getInt("dim", 0, kDims - 1);
      break;
    case OpKind::Stack:
    case OpKind::Unstack:
      a.axis = attrs.getInt("axis", 0, kDims - 1);
      break;
    case OpKind::Split:
      a.axis = attrs.getInt("axis", 0, kDims - 1);
      a.parts = attrs.getInt("parts", 1, 64);
      break;
    case OpKind::CfgCombine: {
      const json &scales = attrs.has("guidance_scales") ? attrs.raw()["guidance_scales"]
                                                        : json();
      if (!scales.is_array() || scales.empty() || scales.size() > 16)
        attrs.fail("guidance_scales", "is " + describeJson(scales) +
                                          ", expected a list of 1 to 16 numbers");
      for (const json &v : scales) {
        if (!v.is_number() || !std::isfinite(v.get<double>()) ||
            std::fabs(v.get<double>()) > 1e6)
          attrs.fail("guidance_scales", "holds " + describeJson(v) +
                                            ", expected a number in [-1e6, 1e6]");
        a.guidanceScales.push_back(v.get<double>());
      }
      break;
    }
    case OpKind::SchedulerStep: {
      std::string kind = attrs.getOptionalString("kind").value_or("flow_match_euler");
      if (kind != "flow_match_euler")
        attrs.fail("kind", "is '" + escapeInvalidUtf8(kind) +
                               "'; this dit-run steps flow_match_euler");
      break;
    }
    case OpKind::AllReduce:
      op.axes = axisList(attrs, "axes");
      if (auto reduction = attrs.getOptionalString("reduction");
          reduction && *reduction != "sum")
        attrs.fail("reduction", "is '" + escapeInvalidUtf8(*reduction) +
                                    "'; this dit-run reduces with sum");
      a.overlapRowChunks =
          attrs.getOptionalInt("overlap_row_chunks", 2, 1 << 16).value_or(1);
      break;
    case OpKind::AllGather:
      op.axes = axisList(attrs, "axes");
      a.axis = attrs.getInt("gather_axis", 0, kDims - 1);
      break;
    case OpKind::AllToAll:
      op.axes = axisList(attrs, "axes");
      a.splitAxis = attrs.getInt("split_axis", 0, kDims - 1);
      a.concatAxis = attrs.getInt("concat_axis", 0, kDims - 1);
      break;
    case OpKind::AllSlice:
      op.axes = axisList(attrs, "axes");
      a.axis = attrs.getInt("slice_axis", 0, kDims - 1);
      break;
    case OpKind::Send:
      op.axes = axisList(attrs, "axes");
      a.peer = peerIndex(attrs, "destination");
      break;
    case OpKind::Recv:
      op.axes = axisList(attrs, "axes");
      a.peer = peerIndex(attrs, "source");
      break;
    // No attributes beyond dit.block and dit.between_steps. Every kind has
    // a case: a PlanOps.def entry without one fails to compile (-Wswitch).
    case OpKind::Call:
    case OpKind::Linear:
    case OpKind::TokenMean:
    case OpKind::TensorEmpty:
      break;
    }
  }

  ParamSpec readParam(const JsonObject &object) {
    ParamSpec p;
    p.name = object.getString("name");
    if (p.name.empty() || p.name.size() > 1024)
      object.fail("name", "is empty or longer than 1024 characters");
    p.shape = object.getIntList("shape", 1, kMaxValueElements);
    if (p.shape.empty() || p.shape.size() > 8)
      object.fail("shape", "has " + std::to_string(p.shape.size()) +
                               " dimensions; expected 1 to 8");
    int64_t elements = 1;
    for (int64_t d : p.shape)
      elements = std::min(elements * d, kMaxValueElements + 1);
    if (elements > kMaxValueElements)
      object.fail("shape", "holds more than " + std::to_string(kMaxValueElements) +
                               " elements");
    if (object.has("split")) {
      JsonObject split = object.getObject("split");
      p.splitDim = int(split.getInt("dim", 0, int64_t(p.shape.size()) - 1));
      p.segments = split.getIntList("segments", 1, kMaxValueElements);
      if (p.segments.empty() || p.segments.size() > 64)
        split.fail("segments", "lists " + std::to_string(p.segments.size()) +
                                   " segments; expected 1 to 64");
      int64_t total = 0, tp = manifest.axisSize("tp");
      for (int64_t w : p.segments) {
        total += w;
        if (w % tp)
          split.fail("segments", "holds " + std::to_string(w) +
                                     ", not divisible by the tp size " +
                                     std::to_string(tp));
      }
      if (total != p.shape[p.splitDim])
        split.fail("segments", "add up to " + std::to_string(total) +
                                   " but dimension " + std::to_string(p.splitDim) +
                                   " of '" + escapeInvalidUtf8(p.name) + "' is " +
                                   std::to_string(p.shape[p.splitDim]));
    }
    p.onlyOnTpZero = object.has("only_on_axis_coordinate_0");
    // The shape the checkpoint stores the tensor in, when it differs: the
    // op's shape is its row-major reshape, so the elements are the same.
    if (object.has("checkpoint")) {
      JsonObject stored = object.getObject("checkpoint");
      p.checkpointShape = stored.getIntList("shape", 1, kMaxValueElements);
      int64_t count = 1, expected = 1;
      for (int64_t d : p.checkpointShape)
        count = std::min(count * d, kMaxValueElements + 1);
      for (int64_t d : p.shape)
        expected *= d;
      if (p.checkpointShape.empty() || p.checkpointShape.size() > 8 || count != expected)
        stored.fail("shape", "must have 1 to 8 dimensions and the " +
                                 std::to_string(expected) + " elements of " +
                                 formatShape(p.shape) + ", which is its row-major reshape");
    }
    return p;
  }

  const Manifest &manifest;
  std::string file;
};
} // namespace
Program loadProgram(const Manifest &manifest, const std::string &id) {
  const ProgramEntry &entry = manifest.programEntry(id);
  Program program;
  program.id = id;
  program.file = escapeInvalidUtf8(manifest.dir + "/" + entry.file);
  program.sha256 = entry.sha256;
  std::string text =
      readPlanFile(manifest.dir, entry.file, kMaxProgramFileBytes,
                   "program '" + escapeInvalidUtf8(id) + "'",
                   "a rank-<r> bundle carries only its own rank's programs");
  std::string actual = sha256Hex(text);
  if (actual != entry.sha256)
    throw BadInput(program.file + ": SHA-256 is " + actual.substr(0, 16) +
                   "... but the manifest expects " + entry.sha256.substr(0, 16) +
                   "...; the file is corrupt or from another plan");
  // A matching hash proves the ranks agree on the file, not that it is sane:
  // everything below is checked as if it came from anywhere.
  json raw = JsonObject::parseText(text, program.file);
  if (!raw.is_object())
    throw BadInput(program.file + ": expected a JSON object");
  JsonObject top(program.file, &raw);
  checkFormatVersion(top);
  program.expert = top.getOptionalString("expert").value_or("transformer");
  if (program.expert != "transformer" && program.expert != "transformer_2")
    top.fail("expert", "is '" + escapeInvalidUtf8(program.expert) +
                           "'; expected transformer or transformer_2");
  FunctionReader reader(manifest, program.file);
  program.step = reader.read(top, id, "outputs");
  const json &inputs = requireList(top, "inputs");
  static const std::set<std::string> known = {
      "latents", "timestep", "sigma", "sigma_next", "text", "pooled_text", "text_mask",
      "guidance"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    JsonObject in = element(top, "inputs", i);
    StepInput input;
    input.name = in.getString("name");
    if (!known.count(input.name))
      in.fail("name", "is '" + escapeInvalidUtf8(input.name) +
                          "'; expected one of latents, timestep, sigma, "
                          "sigma_next, text, pooled_text, text_mask, guidance");
    if (program.step.valueShapes.empty())
      in.fail("value", "names a value, but the program declares none");
    input.value = int(in.getInt("value", 0, int64_t(program.step.valueShapes.size()) - 1));
    input.branch = int(in.getOptionalInt("branch", 0, manifest.branches - 1).value_or(0));
    program.inputs.push_back(input);
  }
  JsonObject functions = top.getObject("functions");
  if (raw["functions"].size() > 4096)
    functions.fail("", "holds " + std::to_string(raw["functions"].size()) +
                           " functions; a plan has a handful");
  for (auto it = raw["functions"].begin(); it != raw["functions"].end(); ++it)
    program.functions[it.key()] =
        reader.read(functions.getObject(it.key()), it.key(), "results");
  validateProgram(manifest, program, ranksRunning(manifest, id));
  return program;
}

} // namespace ditc::runtime
