//===- Plan.cpp - read and validate a compiled plan -----------------------===//
#include "ditc/Runtime/Plan.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/Sha256.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>

namespace ditc::runtime {

using nlohmann::json;

int64_t Manifest::axisSize(const std::string &axis) const {
  for (const Axis &a : axes)
    if (a.name == axis)
      return a.size;
  return 1;
}

const ProgramEntry &Manifest::programEntry(const std::string &id) const {
  for (const ProgramEntry &p : programs)
    if (p.id == id)
      return p;
  throw BadInput(path + ": no entry in 'programs' has id '" + id + "'");
}

std::vector<int64_t>
Manifest::groupOf(int64_t rank, const std::vector<std::string> &groupAxes) const {
  const auto &mine = ranks[rank].coords;
  std::vector<std::pair<std::vector<int64_t>, int64_t>> members;
  for (const RankEntry &entry : ranks) {
    if (!entry.program)
      continue;
    bool sameElsewhere = true;
    for (const Axis &a : axes)
      if (std::find(groupAxes.begin(), groupAxes.end(), a.name) == groupAxes.end() &&
          entry.coords.at(a.name) != mine.at(a.name))
        sameElsewhere = false;
    if (!sameElsewhere)
      continue;
    std::vector<int64_t> key;
    for (const Axis &a : axes)
      if (std::find(groupAxes.begin(), groupAxes.end(), a.name) != groupAxes.end())
        key.push_back(entry.coords.at(a.name));
    members.push_back({key, entry.rank});
  }
  std::sort(members.begin(), members.end());
  std::vector<int64_t> out;
  for (auto &m : members)
    out.push_back(m.second);
  return out;
}

int64_t Manifest::latentBlock(int64_t rank) const {
  int64_t index = 0;
  for (const std::string &axis : latentsSplitOver)
    index = index * axisSize(axis) + ranks[rank].coords.at(axis);
  return index;
}

int64_t Manifest::latentBlocks() const {
  int64_t n = 1;
  for (const std::string &axis : latentsSplitOver)
    n *= axisSize(axis);
  return n;
}

std::vector<int64_t> Manifest::outputHolders() const {
  int64_t lastStage = axisSize("pp") - 1;
  std::vector<int64_t> holders(latentBlocks(), -1);
  for (const RankEntry &entry : ranks) {
    if (!entry.program || entry.coords.at("pp") != lastStage ||
        entry.coords.at("dp") != 0 || entry.coords.at("cfg") != 0 ||
        entry.coords.at("tp") != 0)
      continue;
    int64_t block = latentBlock(entry.rank);
    if (holders[block] < 0)
      holders[block] = entry.rank;
  }
  for (size_t b = 0; b < holders.size(); ++b)
    if (holders[b] < 0)
      throw BadInput(path + ": no rank of the last stage holds latent block " +
                     std::to_string(b));
  return holders;
}

static const char *const kAxisNames[] = {"dp",        "cfg",     "pp", "ring",
                                         "kv_gather", "ulysses", "tp"};

static JsonObject element(const JsonObject &list, const std::string &field,
                          size_t index) {
  return JsonObject(list.file(), &list.raw()[field][index],
                    list.keyPath(field) + "[" + std::to_string(index) + "].");
}

static const json &requireList(const JsonObject &object, const std::string &field) {
  if (!object.has(field) || !object.raw()[field].is_array())
    object.fail(field, "is missing or not a list");
  return object.raw()[field];
}

static std::string readWholeFile(const std::string &path, const std::string &what) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0)
    throw BadInput(path + ": no such file (" + what + ")");
  if (!S_ISREG(info.st_mode))
    throw BadInput(path + ": is not a regular file (" + what + ")");
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (!in && !in.eof())
    throw BadInput(path + ": cannot be read (" + what + ")");
  return buffer.str();
}

Manifest loadManifest(const std::string &dir) {
  Manifest m;
  m.dir = dir;
  m.path = dir + "/manifest.json";
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    throw BadInput(dir + ": not a plan folder (expected a folder written by "
                         "`ditc compile`)");
  json raw = JsonObject::parseFile(m.path);
  if (!raw.is_object())
    throw BadInput(m.path + ": expected a JSON object");
  JsonObject top(m.path, &raw);
  int64_t version = top.getInt("format_version", 0, 1 << 20);
  if (version != 1)
    top.fail("format_version", "is " + std::to_string(version) +
                                   "; this dit-run reads format_version 1");
  m.planHash = top.getString("plan_hash");

  JsonObject model = top.getObject("model");
  m.modelName = model.getString("name");
  m.latentChannels = model.getInt("latent_channels", 1, kAbsurdSize);
  m.textEmbedDim = model.getInt("text_embed_dim", 0, kAbsurdSize);
  m.pooledDim = model.getInt("pooled_dim", 0, kAbsurdSize);
  m.experts = model.getInt("experts", 1, 2);
  m.patch = model.getIntList("patch", 1, 64);
  if (m.patch.size() != 3)
    model.fail("patch", "has " + std::to_string(m.patch.size()) +
                            " entries, expected [t, h, w]");
  m.boundaryRatio = model.getOptionalDouble("boundary_ratio", 0.875, 0.0, 1.0);

  JsonObject work = top.getObject("workload");
  m.batch = work.getInt("batch", 1, kAbsurdSize);
  m.latentFrames = work.getInt("latent_frames", 1, kAbsurdSize);
  m.latentHeight = work.getInt("latent_height", 1, kAbsurdSize);
  m.latentWidth = work.getInt("latent_width", 1, kAbsurdSize);
  m.textTokens = work.getInt("text_tokens", 0, kAbsurdSize);
  m.branches = work.getInt("branches", 1, 16);
  m.steps = work.getInt("steps", 1, 100000);
  if (m.latentFrames % m.patch[0] || m.latentHeight % m.patch[1] ||
      m.latentWidth % m.patch[2])
    work.fail("latent_frames", "latent size " + std::to_string(m.latentFrames) +
                                   "x" + std::to_string(m.latentHeight) + "x" +
                                   std::to_string(m.latentWidth) +
                                   " is not a multiple of the patch");

  JsonObject mesh = top.getObject("mesh");
  const json &axes = requireList(mesh, "axes");
  std::set<std::string> seen;
  for (size_t i = 0; i < axes.size(); ++i) {
    JsonObject axis = element(mesh, "axes", i);
    Axis a{axis.getString("name"), axis.getInt("size", 1, 1 << 20)};
    if (std::find(std::begin(kAxisNames), std::end(kAxisNames), a.name) ==
            std::end(kAxisNames) ||
        !seen.insert(a.name).second)
      axis.fail("name", "is '" + a.name +
                            "'; expected each of dp, cfg, pp, ring, kv_gather, "
                            "ulysses, tp once");
    m.axes.push_back(a);
  }
  if (m.axes.size() != 7)
    mesh.fail("axes", "lists " + std::to_string(m.axes.size()) +
                          " axes; expected all seven");
  int64_t world = 1;
  for (const Axis &a : m.axes)
    world *= a.size;
  int64_t numGpus = mesh.getInt("num_gpus", 1, 1 << 20);
  if (numGpus != world)
    mesh.fail("num_gpus", "is " + std::to_string(numGpus) +
                              " but the axis sizes multiply to " +
                              std::to_string(world));

  const json &programs = requireList(top, "programs");
  std::string programHashes;
  for (size_t i = 0; i < programs.size(); ++i) {
    JsonObject p = element(top, "programs", i);
    ProgramEntry entry{p.getString("id"), p.getString("file"), p.getString("sha256")};
    if (entry.file.find("..") != std::string::npos || entry.file.empty() ||
        entry.file[0] == '/')
      p.fail("file", "is '" + entry.file + "'; expected a path inside the plan folder");
    programHashes += entry.sha256;
    m.programs.push_back(entry);
  }

  const json &ranks = requireList(top, "ranks");
  if (int64_t(ranks.size()) != world)
    top.fail("ranks", "lists " + std::to_string(ranks.size()) +
                          " ranks but the mesh has " + std::to_string(world));
  for (size_t i = 0; i < ranks.size(); ++i) {
    JsonObject r = element(top, "ranks", i);
    RankEntry entry;
    entry.rank = r.getInt("rank", 0, world - 1);
    if (entry.rank != int64_t(i))
      r.fail("rank", "is " + std::to_string(entry.rank) + "; expected " +
                         std::to_string(i) + " (ranks in order)");
    JsonObject coords = r.getObject("coords");
    for (const Axis &a : m.axes)
      entry.coords[a.name] = coords.getInt(a.name, 0, a.size - 1);
    if (r.has("program")) {
      entry.program = r.getString("program");
      m.programEntry(*entry.program);
    }
    if (r.has("program_2")) {
      entry.program2 = r.getString("program_2");
      m.programEntry(*entry.program2);
    }
    m.ranks.push_back(entry);
  }

  JsonObject latents = top.getObject("latents");
  if (latents.getString("layout") != "patch_tokens")
    latents.fail("layout", "is '" + latents.getString("layout") +
                               "'; this dit-run reads 'patch_tokens'");
  m.latentTokens = latents.getInt("tokens", 1, kAbsurdSize);
  m.latentFeatures = latents.getInt("features", 1, kAbsurdSize);
  const json &splitOver = requireList(latents, "split_over");
  for (const json &axis : splitOver) {
    if (!axis.is_string() || !seen.count(axis.get<std::string>()))
      latents.fail("split_over", "names " + describeJson(axis) + ", not a mesh axis");
    m.latentsSplitOver.push_back(axis.get<std::string>());
  }
  int64_t expectTokens = (m.latentFrames / m.patch[0]) *
                         (m.latentHeight / m.patch[1]) *
                         (m.latentWidth / m.patch[2]);
  if (m.latentTokens != expectTokens ||
      m.latentFeatures != m.patch[0] * m.patch[1] * m.patch[2] * m.latentChannels)
    latents.fail("tokens", "says " + std::to_string(m.latentTokens) + " x " +
                               std::to_string(m.latentFeatures) +
                               " but the workload's latents patchify to " +
                               std::to_string(expectTokens) + " x " +
                               std::to_string(m.patch[0] * m.patch[1] *
                                              m.patch[2] * m.latentChannels));
  if (m.latentTokens % m.latentBlocks())
    latents.fail("split_over", "splits " + std::to_string(m.latentTokens) +
                                   " tokens into " +
                                   std::to_string(m.latentBlocks()) +
                                   " blocks, which does not divide");

  // The plan hash covers the manifest and, through their hashes, every
  // program: an edited manifest is as foreign as another plan.
  json unhashed = raw;
  unhashed.erase("plan_hash");
  std::string actual = sha256Hex(unhashed.dump() + programHashes);
  if (actual != m.planHash)
    top.fail("plan_hash", "is " + m.planHash.substr(0, 16) +
                              "... but the manifest's contents hash to " +
                              actual.substr(0, 16) +
                              "...; the manifest was edited or is corrupt");
  return m;
}

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

static const std::map<std::string, OpKind> &opKinds() {
  static const std::map<std::string, OpKind> kinds = {
      {"call", OpKind::Call},
      {"dit.timestep_embedding", OpKind::TimestepEmbedding},
      {"dit.patch_embed", OpKind::PatchEmbed},
      {"dit.linear", OpKind::Linear},
      {"dit.layer_norm", OpKind::LayerNorm},
      {"dit.rms_norm", OpKind::RmsNorm},
      {"dit.adaln_modulation", OpKind::AdalnModulation},
      {"dit.modulate", OpKind::Modulate},
      {"dit.residual_add", OpKind::ResidualAdd},
      {"dit.rope", OpKind::Rope},
      {"dit.attention", OpKind::Attention},
      {"dit.activation", OpKind::Activation},
      {"dit.concat_streams", OpKind::ConcatStreams},
      {"dit.split_streams", OpKind::SplitStreams},
      {"tensor.concat", OpKind::TensorConcat},
      {"tensor.empty", OpKind::TensorEmpty},
      {"dit.stack", OpKind::Stack},
      {"dit.unstack", OpKind::Unstack},
      {"dit.cfg_combine", OpKind::CfgCombine},
      {"dit.scheduler_step", OpKind::SchedulerStep},
      {"shard.all_reduce", OpKind::AllReduce},
      {"shard.all_gather", OpKind::AllGather},
      {"shard.all_to_all", OpKind::AllToAll},
      {"shard.all_slice", OpKind::AllSlice},
      {"shard.send", OpKind::Send},
      {"shard.recv", OpKind::Recv},
  };
  return kinds;
}

namespace {
/// Reads one function (or a program's top level) and checks that every
/// value id an op names exists, so the executor can index without checks.
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
      for (const json &d : v.raw()["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0 ||
            d.get<int64_t>() > kAbsurdSize * 64)
          v.fail("shape", "holds " + describeJson(d) + ", expected a size");
        shape.push_back(d.get<int64_t>());
      }
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
    std::vector<int> out;
    for (int64_t id : object.getIntList(field, 0, int64_t(fn.valueShapes.size()) - 1))
      out.push_back(int(id));
    return out;
  }

  Op readOp(const JsonObject &object, const Function &fn) {
    Op op;
    op.name = object.getString("op");
    auto kind = opKinds().find(op.name);
    if (kind == opKinds().end())
      object.fail("op", "is '" + op.name + "', which this dit-run cannot execute");
    op.kind = kind->second;
    if (object.has("in") && !object.raw()["in"].empty())
      op.inputs = ids(object, "in", fn);
    if (object.has("out") && !object.raw()["out"].empty())
      op.outputs = ids(object, "out", fn);
    op.attrs = object.has("attrs") ? object.raw()["attrs"] : json::object();
    if (!op.attrs.is_object())
      object.fail("attrs", "is not an object");
    if (op.kind == OpKind::Call)
      op.callee = object.getString("callee");
    if (object.has("params")) {
      const json &params = requireList(object, "params");
      for (size_t i = 0; i < params.size(); ++i)
        op.params.push_back(readParam(element(object, "params", i)));
    }
    JsonObject attrs(file, &op.attrs, object.keyPath("attrs") + ".");
    op.betweenSteps = attrs.getOptionalBool("dit.between_steps", false);
    auto axisList = [&](const std::string &field) {
      std::vector<std::string> out;
      if (!attrs.has(field) || !op.attrs[field].is_array())
        attrs.fail(field, "is missing or not a list of axis names");
      for (const json &a : op.attrs[field]) {
        if (!a.is_string() || manifest.axisSize(a.get<std::string>()) < 1 ||
            std::find(std::begin(kAxisNames), std::end(kAxisNames),
                      a.get<std::string>()) == std::end(kAxisNames))
          attrs.fail(field, "names " + describeJson(a) + ", not a mesh axis");
        out.push_back(a.get<std::string>());
      }
      return out;
    };
    switch (op.kind) {
    case OpKind::AllReduce: case OpKind::AllGather: case OpKind::AllToAll:
    case OpKind::AllSlice: case OpKind::Send: case OpKind::Recv:
      op.axes = axisList("axes");
      break;
    case OpKind::LayerNorm: case OpKind::RmsNorm:
      if (attrs.has("dit.reduce_stats_over"))
        op.axes = axisList("dit.reduce_stats_over");
      break;
    case OpKind::Attention:
      if (attrs.has("dit.ring_axis"))
        op.axes = {attrs.getString("ring_axis_name")};
      break;
    default:
      break;
    }
    size_t minInputs = 0;
    switch (op.kind) {
    case OpKind::Modulate: case OpKind::ResidualAdd: case OpKind::ConcatStreams:
      minInputs = 2; break;
    case OpKind::SchedulerStep: minInputs = 4; break;
    case OpKind::TensorEmpty: case OpKind::Call: minInputs = 0; break;
    default: minInputs = 1; break;
    }
    if (op.inputs.size() < minInputs)
      object.fail("in", "lists " + std::to_string(op.inputs.size()) + " operands; '" +
                            op.name + "' takes at least " + std::to_string(minInputs));
    if (op.outputs.empty() && op.kind != OpKind::Send && op.kind != OpKind::Call)
      object.fail("out", "is empty; '" + op.name + "' produces a value");
    return op;
  }

  ParamSpec readParam(const JsonObject &object) {
    ParamSpec p;
    p.name = object.getString("name");
    p.shape = object.getIntList("shape", 1, kAbsurdSize * 64);
    if (object.has("split")) {
      JsonObject split = object.getObject("split");
      p.splitDim = int(split.getInt("dim", 0, int64_t(p.shape.size()) - 1));
      p.segments = split.getIntList("segments", 1, kAbsurdSize * 64);
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
                                   " of '" + p.name + "' is " +
                                   std::to_string(p.shape[p.splitDim]));
    }
    p.onlyOnTpZero = object.has("only_on_axis_coordinate_0");
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
  program.file = manifest.dir + "/" + entry.file;
  program.sha256 = entry.sha256;
  std::string text = readWholeFile(
      program.file, "program '" + id + "'; a rank-<r> bundle carries only its "
                    "own rank's programs");
  std::string actual = sha256Hex(text);
  if (actual != entry.sha256)
    throw BadInput(program.file + ": SHA-256 is " + actual.substr(0, 16) +
                   "... but the manifest expects " + entry.sha256.substr(0, 16) +
                   "...; the file is corrupt or from another plan");
  json raw;
  try {
    raw = json::parse(text);
  } catch (const std::exception &error) {
    throw BadInput(program.file + ": not valid JSON: " + error.what());
  }
  if (!raw.is_object())
    throw BadInput(program.file + ": expected a JSON object");
  JsonObject top(program.file, &raw);
  program.expert = top.getOptionalString("expert").value_or("transformer");
  if (program.expert != "transformer" && program.expert != "transformer_2")
    top.fail("expert", "is '" + program.expert +
                           "'; expected transformer or transformer_2");
  FunctionReader reader(manifest, program.file);
  program.step = reader.read(top, id, "outputs");
  const json &inputs = requireList(top, "inputs");
  static const std::set<std::string> known = {
      "latents", "timestep", "sigma", "sigma_next", "text", "pooled_text", "guidance"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    JsonObject in = element(top, "inputs", i);
    StepInput input;
    input.name = in.getString("name");
    if (!known.count(input.name))
      in.fail("name", "is '" + input.name + "'; expected one of latents, "
                                            "timestep, sigma, sigma_next, text, "
                                            "pooled_text, guidance");
    input.value = int(in.getInt("value", 0, int64_t(program.step.valueShapes.size()) - 1));
    input.branch = int(in.getOptionalInt("branch", 0, manifest.branches - 1).value_or(0));
    program.inputs.push_back(input);
  }
  JsonObject functions = top.getObject("functions");
  for (auto it = raw["functions"].begin(); it != raw["functions"].end(); ++it)
    program.functions[it.key()] =
        reader.read(functions.getObject(it.key()), it.key(), "results");
  // Every call must name a function that exists, with matching arity.
  auto checkCalls = [&](const Function &fn) {
    for (const Op &op : fn.ops) {
      if (op.kind != OpKind::Call)
        continue;
      auto callee = program.functions.find(op.callee);
      if (callee == program.functions.end())
        throw BadInput(program.file + ": '" + fn.name + "' calls '" + op.callee +
                       "', which is not under 'functions'");
      if (callee->second.args.size() != op.inputs.size() ||
          callee->second.results.size() != op.outputs.size())
        throw BadInput(program.file + ": the call of '" + op.callee +
                       "' passes " + std::to_string(op.inputs.size()) +
                       " values but the function takes " +
                       std::to_string(callee->second.args.size()));
      if (op.callee == fn.name)
        throw BadInput(program.file + ": '" + fn.name + "' calls itself");
    }
  };
  checkCalls(program.step);
  for (auto &fn : program.functions)
    checkCalls(fn.second);
  return program;
}

} // namespace ditc::runtime
