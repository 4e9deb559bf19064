//===- PlanEmitter.cpp - role programs to JSON, with per-step accounting --===//
//
// Flattens each role function (calls inlined) into a list of ops over
// numbered values, attaches the parameter slices each op reads, counts the
// bytes every collective sends with the standard algorithms, and writes the
// manifest that ties ranks to programs. The format is docs/plan-format.md.
//
//===----------------------------------------------------------------------===//
#include "ditc/Plan/PlanEmitter.h"
#include "ditc/Analysis/MeshLayout.h"
#include "ditc/Plan/RankLayout.h"
#include "ditc/Support/AtomicFile.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Sha256.h"
#include "ditc/Support/Utf8.h"
#include "ditc/Transforms/MeshInfo.h"
#include "ditc/Transforms/Roles.h"
#include "ditc/Transforms/ShardingAttrs.h"
#include "ditc/Transforms/StepInputs.h"

#include "dit/IR/DitInterfaces.h"
#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <filesystem>
#include <map>
#include <set>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;
using nlohmann::json;

namespace ditc {
namespace {

std::string dtypeName(Type type) {
  if (type.isBF16())
    return "bf16";
  if (type.isF16())
    return "f16";
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  std::string out;
  llvm::raw_string_ostream os(out);
  type.print(os);
  return out;
}

int64_t dtypeBytes(Type type) {
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

int64_t elements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t tensorBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return elements(tensor.getShape()) * dtypeBytes(tensor.getElementType());
}

/// Attribute to JSON: numbers, strings, arrays and enums by their keyword.
json attrToJson(Attribute attr) {
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    if (i.getType().isInteger(1))
      return bool(i.getValue().getBoolValue());
    return i.getInt();
  }
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.str();
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return json(std::vector<int64_t>(a.asArrayRef().begin(), a.asArrayRef().end()));
  if (auto a = dyn_cast<DenseI16ArrayAttr>(attr))
    return json(std::vector<int64_t>(a.asArrayRef().begin(), a.asArrayRef().end()));
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    json out = json::array();
    for (Attribute e : a)
      out.push_back(attrToJson(e));
    return out;
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    json out = json::object();
    for (NamedAttribute n : d)
      out[n.getName().str()] = attrToJson(n.getValue());
    return out;
  }
  if (auto s = dyn_cast<FlatSymbolRefAttr>(attr))
    return s.getValue().str();
  if (isa<UnitAttr>(attr))
    return true;
  if (auto e = dyn_cast<dit::TextPositionAttr>(attr))
    return dit::stringifyTextPosition(e.getValue()).str();
  if (auto e = dyn_cast<dit::AttentionKindAttr>(attr))
    return dit::stringifyAttentionKind(e.getValue()).str();
  if (auto e = dyn_cast<dit::ActivationKindAttr>(attr))
    return dit::stringifyActivationKind(e.getValue()).str();
  if (auto e = dyn_cast<dit::QKVLayoutAttr>(attr))
    return dit::stringifyQKVLayout(e.getValue()).str();
  if (auto e = dyn_cast<dit::KVCacheAttr>(attr))
    return dit::stringifyKVCache(e.getValue()).str();
  if (auto e = dyn_cast<dit::SchedulerKindAttr>(attr))
    return dit::stringifySchedulerKind(e.getValue()).str();
  if (auto e = dyn_cast<shard::ReductionKindAttr>(attr))
    return shard::stringifyReductionKind(e.getValue()).str();
  // Enums and the remaining dialect attributes: their printed keyword, as
  // in `#dit<text_position prefix>` -> "prefix".
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  os.flush();
  auto space = text.rfind(' ');
  if (text.rfind("#dit<", 0) == 0 && space != std::string::npos)
    return text.substr(space + 1, text.size() - space - 2);
  if (auto angle = text.find('<'); text.rfind("#shard", 0) == 0 &&
                                   angle != std::string::npos)
    return text.substr(angle + 1, text.size() - angle - 2);
  return text;
}

struct Flattener {
  const MeshInfo &mesh;
  json ops = json::array();
  json values = json::array();
  llvm::DenseMap<Value, int64_t> ids;
  StepStats stats;
  Type elementType;
  std::vector<int64_t> lastUse; // per value id, the op index of its last use
  std::vector<int64_t> valueBytes; // per value id
  std::set<std::string> counted; // parameters already in paramBytes
  std::set<const Flattener *> calleesCounted;
  json args = json::array();     // value ids of the function arguments
  std::vector<int64_t> results;  // value ids returned
  int64_t peak = 0, calleePeak = 0;
  int64_t minBlock = INT64_MAX, maxBlock = -1;

  dit::MeshContext meshContext;

  explicit Flattener(const MeshInfo &mesh)
      : mesh(mesh), meshContext(meshContextOf(mesh)) {}

  int64_t define(Value v) {
    auto tensor = cast<RankedTensorType>(v.getType());
    int64_t id = values.size();
    values.push_back({{"shape", tensor.getShape()},
                      {"dtype", dtypeName(tensor.getElementType())}});
    valueBytes.push_back(tensorBytes(tensor));
    lastUse.push_back(-1);
    ids[v] = id;
    return id;
  }

  int64_t use(Value v) {
    int64_t id = ids.lookup(v);
    lastUse[id] = int64_t(ops.size());
    return id;
  }

  std::string axesName(ArrayRef<int16_t> gridAxes) {
    std::string out;
    for (int16_t a : gridAxes)
      out += (out.empty() ? "" : "+") + std::string(axisName(mesh.order[a]));
    return out;
  }
  json axesJson(ArrayRef<int16_t> gridAxes) {
    json out = json::array();
    for (int16_t a : gridAxes)
      out.push_back(axisName(mesh.order[a]));
    return out;
  }

  void count(const std::string &kind, const std::string &axis, double bytes) {
    stats.collectives[kind] += 1;
    stats.bytesSent[axis] += int64_t(bytes);
  }

  /// Parameters an op reads, with the slice this role holds.
  json params(Operation *op) {
    // Ops that read parameters name them in `weight` (optional on norms).
    if (!isa<dit::DitParameterOpInterface>(op) || !op->hasAttr("weight"))
      return nullptr;
    int64_t tp = mesh.size(Axis::TP);
    json out = json::array();
    Type elt = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
    auto add = [&](const std::string &param, std::vector<int64_t> shape,
                   int64_t splitDim, std::vector<int64_t> segments,
                   bool rank0Only = false) {
      json p = {{"name", param}, {"shape", shape}};
      std::vector<int64_t> local = shape;
      if (splitDim >= 0 && tp > 1) {
        if (segments.empty())
          segments = {shape[splitDim]};
        p["split"] = {{"dim", splitDim}, {"axis", "tp"}, {"segments", segments}};
        local[splitDim] /= tp;
      }
      if (rank0Only)
        p["only_on_axis_coordinate_0"] = "tp";
      // A transformer called once per branch reads its weights twice but
      // holds them once.
      if (counted.insert(param).second)
        stats.paramBytes += elements(local) * dtypeBytes(elt);
      out.push_back(p);
    };
    // Each op names its parameters (DitParameterOpInterface).
    SmallVector<dit::ParameterSpec> specs;
    cast<dit::DitParameterOpInterface>(op).getParameters(tp, specs);
    for (const dit::ParameterSpec &spec : specs)
      add(spec.name, std::vector<int64_t>(spec.shape.begin(), spec.shape.end()),
          spec.splitDim,
          std::vector<int64_t>(spec.segments.begin(), spec.segments.end()),
          spec.rank0Only);
    return out;
  }

  /// Per-step traffic of one op. Transfers between steps (the latents the
  /// last stage returns to the first) count once per step like the rest.
  void account(Operation *op) {    if (auto r = dyn_cast<shard::AllReduceOp>(op)) {
      int64_t n = mesh.groupSize(r.getGridAxes());
      count("all_reduce", axesName(r.getGridAxes()),
            2.0 * (n - 1) / n * tensorBytes(r.getInput().getType()));
    } else if (auto g = dyn_cast<shard::AllGatherOp>(op)) {
      int64_t n = mesh.groupSize(g.getGridAxes());
      count("all_gather", axesName(g.getGridAxes()),
            double(n - 1) * tensorBytes(g.getInput().getType()));
    } else if (auto a = dyn_cast<shard::AllToAllOp>(op)) {
      int64_t n = mesh.groupSize(a.getGridAxes());
      count("all_to_all", axesName(a.getGridAxes()),
            double(n - 1) / n * tensorBytes(a.getInput().getType()));
    } else if (auto s = dyn_cast<shard::SendOp>(op)) {
      count("send", axesName(s.getGridAxes()), tensorBytes(s.getInput().getType()));
    } else if (auto r = dyn_cast<shard::RecvOp>(op)) {
      count("recv", axesName(r.getGridAxes()), 0);
    } else if (auto cost = dyn_cast<dit::DitCostOpInterface>(op)) {
      // dit ops that communicate themselves count their own traffic.
      SmallVector<dit::Traffic> traffic;
      cost.getTraffic(meshContext, traffic);
      for (const dit::Traffic &t : traffic) {
        stats.collectives[t.kind] += t.count;
        stats.bytesSent[t.axis] += int64_t(t.bytes);
      }
    }
  }

  /// Emits `fn`'s body into this flattener's op list. Calls to other
  /// functions become `call` ops naming an entry of `functions`, emitted
  /// once however often they are called; their traffic is added per call.
  LogicalResult emit(func::FuncOp fn, json &functions,
                     std::map<std::string, Flattener> &done) {
    for (BlockArgument arg : fn.getArguments())
      define(arg);
    for (Operation &op : fn.front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (Value v : ret.getOperands())
          results.push_back(use(v));
        continue;
      }
      json entry = {{"op", op.getName().getStringRef().str()}};
      json in = json::array(), out = json::array();
      for (Value v : op.getOperands())
        in.push_back(use(v));
      for (Value v : op.getResults())
        out.push_back(define(v));
      entry["in"] = in;
      entry["out"] = out;
      if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (!callee || callee.isExternal())
          return call.emitError() << "the plan cannot emit " << call.getCallee();
        std::string name = callee.getName().str();
        if (!done.count(name)) {
          Flattener body(mesh);
          body.counted = counted;
          if (failed(body.emit(callee, functions, done)))
            return failure();
          body.peak = body.peakActivationBytes();
          // Move, not copy: a transformer body is most of the plan.
          json entry = json::object();
          entry["values"] = std::move(body.values);
          entry["args"] = std::move(body.args);
          entry["results"] = body.results;
          entry["ops"] = std::move(body.ops);
          functions[name] = std::move(entry);
          counted = body.counted;
          done.emplace(name, std::move(body));
        }
        const Flattener &body = done.at(name);
        for (auto &[kind, n] : body.stats.collectives)
          stats.collectives[kind] += n;
        for (auto &[axis, n] : body.stats.bytesSent)
          stats.bytesSent[axis] += n;
        stats.paramBytes += calledParamBytes(body);
        calleePeak = std::max(calleePeak, body.peak);
        minBlock = std::min(minBlock, body.minBlock);
        maxBlock = std::max(maxBlock, body.maxBlock);
        entry["op"] = "call";
        entry["callee"] = name;
        ops.push_back(entry);
        continue;
      }
      json attrs = json::object();
      for (NamedAttribute a : op.getAttrs()) {
        StringRef key = a.getName().getValue();
        // The shard ops' grid symbol is implied (one @mesh); rope's token
        // grid is data.
        if (key == kShardingAttrName ||
            (key == "grid" && isa<FlatSymbolRefAttr>(a.getValue())))
          continue;
        attrs[key.str()] = attrToJson(a.getValue());
      }
      if (auto axes = op.getAttrOfType<DenseI16ArrayAttr>("grid_axes"))
        attrs["axes"] = axesJson(axes.asArrayRef());
      if (auto ring = op.getAttrOfType<IntegerAttr>(kRingAxisAttrName))
        attrs["ring_axis_name"] = axisName(mesh.order[ring.getInt()]);
      entry["attrs"] = attrs;
      json p = params(&op);
      if (!p.is_null())
        entry["params"] = p;
      if (auto block = op.getAttrOfType<IntegerAttr>(dit::DitDialect::kBlockAttrName)) {
        minBlock = std::min<int64_t>(minBlock, block.getInt());
        maxBlock = std::max<int64_t>(maxBlock, block.getInt());
      }
      account(&op);
      ops.push_back(entry);
    }
    return success();
  }

  /// The parameter bytes a callee adds the first time it is called.
  int64_t calledParamBytes(const Flattener &body) {
    if (calleesCounted.insert(&body).second)
      return body.stats.paramBytes;
    return 0;
  }

  int64_t define(BlockArgument arg) {
    int64_t id = define(Value(arg));
    args.push_back(id);
    return id;
  }

  /// Peak bytes of values alive at once, by a scan over definitions and
  /// last uses.
  int64_t peakActivationBytes() {
    int64_t live = 0, peak = 0;
    const std::vector<int64_t> &bytes = valueBytes;
    std::vector<std::vector<int64_t>> dying(ops.size() + 1);
    for (size_t id = 0; id < values.size(); ++id)
      if (lastUse[id] >= 0)
        dying[lastUse[id]].push_back(id);
    size_t index = 0;
    for (size_t id = 0; id < args.size(); ++id)
      live += bytes[args[id].get<int64_t>()];
    for (const json &op : ops) {
      for (int64_t id : op["out"])
        live += bytes[id];
      peak = std::max(peak, live + (op["op"] == "call" ? calleePeak : 0));
      for (int64_t id : dying[index])
        live -= bytes[id];
      ++index;
    }
    return peak;
  }
};

} // namespace

FailureOr<Plan> buildPlan(ModuleOp module, const ModelSpec &spec,
                          const Workload &workload,
                          const Deployment &deployment,
                          const std::vector<PlanWarning> &warnings) {
  FailureOr<MeshInfo> mesh = readMeshInfo(module);
  auto roles = module->getAttrOfType<ArrayAttr>(kRolesAttrName);
  auto table = module->getAttrOfType<DenseI64ArrayAttr>(kRankRolesAttrName);
  auto groups = module->getAttrOfType<DictionaryAttr>(kGroupsAttrName);
  if (failed(mesh) || !roles || !table || !groups)
    return module.emitError() << "the plan needs a module lowered by the "
                                 "partition pipeline";
  Plan plan;
  int64_t cfg = mesh->size(Axis::CFG), stages = mesh->size(Axis::PP);
  int64_t branches = workload.branches;
  for (Attribute ref : roles) {
    auto fn = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        module, cast<FlatSymbolRefAttr>(ref));
    auto role = fn->getAttrOfType<DictionaryAttr>(kRoleAttrName);
    ProgramFile program;
    program.stage = cast<IntegerAttr>(role.get("stage")).getInt();
    program.cfg = cast<IntegerAttr>(role.get("cfg")).getInt();
    program.expert = fn.getName().starts_with("denoise_step_2") ? "transformer_2"
                                                                 : "transformer";
    program.id = "s" + std::to_string(program.stage) + "_c" +
                 std::to_string(program.cfg) +
                 (program.expert == "transformer_2" ? "_e2" : "");
    program.file = "programs/" + program.id + ".json";
    for (int64_t slot = 0; slot < branches / cfg; ++slot)
      program.branches.push_back(program.cfg * (branches / cfg) + slot);

    Flattener flat(*mesh);
    json functions = json::object();
    std::map<std::string, Flattener> done;
    if (failed(flat.emit(fn, functions, done)))
      return failure();
    json inputs = json::array();
    for (BlockArgument arg : fn.getArguments()) {
      StringRef name = stepInputName(arg);
      if (name.empty())
        return fn.emitError() << "argument #" << arg.getArgNumber()
                              << " has no '" << dit::DitDialect::kInputAttrName
                              << "' name; the importer names every step input";
      json input = {{"name", name.str()},
                    {"value", flat.args[arg.getArgNumber()]}};
      if (std::optional<int64_t> branch = stepInputBranch(arg))
        input["branch"] = *branch;
      inputs.push_back(input);
    }
    flat.stats.activationBytes = flat.peakActivationBytes();
    if (flat.maxBlock >= 0)
      program.layers = {flat.minBlock, flat.maxBlock};
    program.stats = flat.stats;
    json &out = program.program;
    out = {{"format_version", 1},
           {"id", program.id},
           {"stage", program.stage},
           {"cfg", program.cfg},
           {"branches", program.branches},
           {"expert", program.expert},
           {"outputs", flat.results}};
    out["inputs"] = std::move(inputs);
    out["values"] = std::move(flat.values);
    out["ops"] = std::move(flat.ops);
    out["functions"] = std::move(functions);
    plan.programs.push_back(std::move(program));
  }

  // Manifest: model, workload, mesh (layout order), groups, rank table.
  json manifest = {{"format_version", 1},
                   {"model", modelSpecJson(spec)},
                   {"workload", workloadJson(workload)}};
  json axes = json::array();
  for (Axis axis : mesh->order)
    axes.push_back({{"name", axisName(axis)}, {"size", mesh->size(axis)}});
  manifest["mesh"] = {{"axes", axes}, {"num_gpus", deployment.numGpus}};
  // The node shape the check judged cross-node groups by: as given, or one
  // node holding every rank. A legal deployment's shape covers the world.
  int64_t perNode = deployment.ranksPerNode().value_or(deployment.numGpus);
  manifest["topology"] = {
      {"nnodes", deployment.nnodes.value_or(deployment.numGpus / perNode)},
      {"gpus_per_node", perNode}};
  json warningsJson = json::array();
  for (const PlanWarning &warning : warnings)
    warningsJson.push_back({{"rule", warning.rule},
                            {"message", escapeInvalidUtf8(warning.message)},
                            {"component", warning.component}});
  manifest["warnings"] = warningsJson;
  json groupsJson = json::object();
  for (NamedAttribute axis : groups) {
    json lists = json::array();
    for (Attribute list : cast<ArrayAttr>(axis.getValue())) {
      auto ranks = cast<DenseI64ArrayAttr>(list).asArrayRef();
      lists.push_back(std::vector<int64_t>(ranks.begin(), ranks.end()));
    }
    groupsJson[axis.getName().str()] = lists;
  }
  manifest["groups"] = groupsJson;
  std::vector<Axis> seq = mesh->sequenceAxes();
  json seqAxes = json::array();
  for (Axis a : seq)
    seqAxes.push_back(axisName(a));
  manifest["latents"] = {
      {"layout", "patch_tokens"},
      {"tokens", workload.imageTokens},
      {"features", spec.latentChannels * spec.patch[0] * spec.patch[1] * spec.patch[2]},
      {"split_over", seqAxes}};
  const Placement &transformer = *deployment.find("transformer");
  Placement laidOut = layOut(transformer, mesh->order);
  std::vector<Degrees> coords =
      rankCoordinates(laidOut, mesh->order, deployment.numGpus);
  json ranks = json::array();
  size_t perExpert = size_t(stages * cfg);
  for (int64_t rank = 0; rank < deployment.numGpus; ++rank) {
    int64_t role = rank < int64_t(table.size()) ? table[rank] : -1;
    json entry = {{"rank", rank}};
    if (role < 0) {
      entry["program"] = nullptr;
    } else {
      json c = json::object();
      for (Axis axis : kAllAxes)
        c[axisName(axis)] = coords[rank][axis];
      entry["coords"] = c;
      entry["program"] = plan.programs[role].id;
      if (plan.programs.size() > perExpert)
        entry["program_2"] = plan.programs[perExpert + role].id;
    }
    ranks.push_back(entry);
  }
  manifest["ranks"] = ranks;
  std::string text;
  llvm::raw_string_ostream os(text);
  // The pipeline has just verified the module; printing need not again.
  module.print(os, OpPrintingFlags().assumeVerified());
  os.flush();
  plan.partitionedMLIR = text;
  plan.manifest = manifest;
  return plan;
}

static json statsJson(const StepStats &s) {
  return {{"collectives", s.collectives},
          {"bytes_sent", s.bytesSent},
          {"param_bytes", s.paramBytes},
          {"activation_bytes", s.activationBytes}};
}

/// The most bytes one `ditc compile` writes. The largest plan without
/// --per-rank (2^20 ranks) is about 430 MB; bundles repeat the manifest,
/// whose size grows with the rank count, once per rank, so their total grows
/// with its square.
constexpr uint64_t kMaxPlanBytes = uint64_t(1) << 30;

/// Plan files are valid UTF-8 whatever a name in them held: strings from
/// outside (the model's name) are escaped where they are put in, and any
/// other invalid byte is replaced rather than thrown about.
static std::string dumpJson(const json &value, int indent = -1) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string writePlan(Plan &plan, const std::string &dir, bool perRank) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target = fs::absolute(fs::path(dir), ec).lexically_normal();
  if (ec || target.empty())
    throw BadInput(dir + ": is not a usable path for the plan folder");
  if (!target.has_filename()) // "plan/" or "."
    target = target.parent_path();
  if (fs::exists(target, ec)) {
    if (!fs::is_directory(target, ec))
      throw BadInput(dir + ": exists and is not a folder; -o needs a new or "
                           "empty folder");
    if (!fs::is_empty(target, ec))
      throw BadInput(dir + ": is not empty; -o needs a new or empty folder");
  }

  // Everything is rendered and sized before anything is written.
  std::vector<std::string> contents;
  std::map<std::string, uint64_t> programBytes; // by program id
  json programs = json::array();
  std::string hashInput;
  for (ProgramFile &p : plan.programs) {
    std::string content = dumpJson(p.program) + "\n";
    std::string hash = sha256Hex(content);
    programBytes[p.id] = content.size();
    programs.push_back({{"id", p.id},
                        {"file", p.file},
                        {"sha256", hash},
                        {"stage", p.stage},
                        {"branch", p.branches.empty() ? 0 : p.branches.front()},
                        {"branches", p.branches},
                        {"expert", p.expert},
                        {"layers", {p.layers.first, p.layers.second}},
                        {"per_step", statsJson(p.stats)}});
    hashInput += hash;
    contents.push_back(std::move(content));
  }
  plan.manifest["programs"] = programs;
  std::string planHash = sha256Hex(dumpJson(plan.manifest) + hashInput);
  plan.manifest["plan_hash"] = planHash;
  std::string manifestText = dumpJson(plan.manifest, 1) + "\n";
  // A picture of where the ranks sit, drawn from the manifest alone (the
  // same data `ditc explain` reads back). Not hashed: nothing runs it.
  std::string layoutSvg =
      renderLayoutSvg(readRankLayout(JsonObject("manifest.json", &plan.manifest)));

  // manifest x (bundles + 1) + programs x (1 + the bundles that run them).
  // Every term is far below 2^64: at most 2^20 bundles of files a process
  // holds in memory.
  uint64_t total = manifestText.size() + plan.partitionedMLIR.size() +
                   layoutSvg.size();
  for (const std::string &content : contents)
    total += content.size();
  uint64_t bundles = 0;
  if (perRank) {
    for (const json &rank : plan.manifest["ranks"]) {
      ++bundles;
      total += manifestText.size();
      for (const char *key : {"program", "program_2"})
        if (rank.contains(key) && rank[key].is_string())
          total += programBytes[rank[key].get<std::string>()];
    }
  }
  if (total > kMaxPlanBytes) {
    auto mib = [](uint64_t bytes) {
      return llvm::formatv("{0:F1} MiB", double(bytes) / (1 << 20)).str();
    };
    std::string why =
        perRank ? " with --per-rank (" + std::to_string(bundles) +
                      " rank bundles, each repeating the " +
                      mib(manifestText.size()) +
                      " manifest); drop --per-rank and ship the plan folder "
                      "itself to every host (dit-run PLAN_DIR runs any of "
                      "its ranks)"
                : "; use fewer ranks";
    throw BadInput(dir + ": the plan would take " + std::to_string(total) +
                   " bytes (" + mib(total) + "), more than the " +
                   std::to_string(kMaxPlanBytes) + " bytes (1 GiB) ditc " +
                   "compile writes" + why);
  }

  // The plan is built beside its destination and renamed into place, so a
  // failure leaves nothing behind. mkdtemp picks an unpredictable name and
  // fails rather than reuse anything already there (a planted folder or
  // symbolic link).
  fs::path parent = target.parent_path();
  fs::create_directories(parent, ec);
  if (ec)
    throw BadInput(dir + ": cannot create the plan folder's parent: " +
                   ec.message());
  std::string pattern =
      (parent / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data()))
    throw BadInput(dir + ": cannot create the plan folder: " +
                   std::strerror(errno));
  fs::path temp(name.data());
  try {
    // mkdtemp makes the folder private; the plan gets the usual mode.
    mode_t mask = ::umask(0);
    ::umask(mask);
    if (::chmod(temp.c_str(), 0777 & ~mask) != 0 ||
        ::mkdir((temp / "programs").c_str(), 0777) != 0)
      throw BadInput(dir + ": cannot create the plan folder: " +
                     std::strerror(errno));
    for (size_t i = 0; i < plan.programs.size(); ++i)
      writeFileAtomically((temp / plan.programs[i].file).string(), contents[i]);
    writeFileAtomically((temp / "manifest.json").string(), manifestText);
    writeFileAtomically((temp / "partitioned.mlir").string(),
                        plan.partitionedMLIR);
    writeFileAtomically((temp / "layout.svg").string(), layoutSvg);
    if (perRank) {
      // Each bundle repeats the manifest (same plan hash) and carries only
      // the programs its rank runs.
      for (const json &rank : plan.manifest["ranks"]) {
        fs::path bundle = temp / ("rank-" + std::to_string(rank["rank"].get<int64_t>()));
        fs::create_directories(bundle / "programs", ec);
        if (ec)
          throw BadInput(dir + ": cannot create " + bundle.filename().string() +
                         ": " + ec.message());
        writeFileAtomically((bundle / "manifest.json").string(), manifestText);
        for (const char *key : {"program", "program_2"}) {
          if (!rank.contains(key) || rank[key].is_null())
            continue;
          std::string file = "programs/" + rank[key].get<std::string>() + ".json";
          fs::copy_file(temp / file, bundle / file, ec);
          if (ec)
            throw BadInput(dir + ": cannot write " + (bundle / file).string() +
                           ": " + ec.message());
        }
      }
    }
    if (fs::exists(target, ec))
      fs::remove(target, ec); // the empty folder the user named
    fs::rename(temp, target, ec);
    if (ec)
      throw BadInput(dir + ": cannot be written: " + ec.message());
    return planHash;
  } catch (...) {
    fs::remove_all(temp, ec);
    throw;
  }
}

std::string formatPlanSummary(const Plan &plan) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::format("%-8s %-6s %-9s %-44s %-40s %12s %12s\n", "program",
                     "stage", "branches", "collectives / step",
                     "bytes sent / step", "params", "activations");
  auto mib = [](int64_t bytes) {
    return llvm::formatv("{0:F1} MiB", double(bytes) / (1 << 20)).str();
  };
  for (const ProgramFile &p : plan.programs) {
    std::string collectives, bytes, branches;
    for (auto &[kind, n] : p.stats.collectives)
      collectives += (collectives.empty() ? "" : " ") + kind + "=" + std::to_string(n);
    for (auto &[axis, n] : p.stats.bytesSent)
      bytes += (bytes.empty() ? "" : " ") + axis + "=" + mib(n);
    for (int64_t b : p.branches)
      branches += (branches.empty() ? "" : ",") + std::to_string(b);
    os << llvm::format("%-8s %-6lld %-9s %-44s %-40s %12s %12s\n",
                       p.id.c_str(), (long long)p.stage, branches.c_str(),
                       collectives.empty() ? "none" : collectives.c_str(),
                       bytes.empty() ? "none" : bytes.c_str(),
                       mib(p.stats.paramBytes).c_str(),
                       mib(p.stats.activationBytes).c_str());
  }
  return out;
}

} // namespace ditc
