//===- ManifestBuilder.cpp - the plan manifest from the lowered module ----===//
//
// Reads the layout the pipeline recorded instead of laying the ranks out
// again: a rank's coordinate on an axis is its position in the group of
// that axis holding it (groups list their members by ascending coordinate,
// the definition the runtime checks), and its program is its entry of the
// rank table.
//
//===----------------------------------------------------------------------===//
#include "ditc/Plan/ManifestBuilder.h"
#include "ditc/Analysis/AxisConversion.h"
#include "ditc/Support/Utf8.h"
#include "ditc/Transforms/BandPrograms.h"
#include "ditc/Transforms/Roles.h"

#include "dit/IR/DitDialect.h"
#include "dit/IR/DitOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;
using nlohmann::json;

namespace ditc {
namespace {

//===----------------------------------------------------------------------===//
// The pass attributes the manifest reads, one reader each
//===----------------------------------------------------------------------===//

/// `dit.roles`: the role functions, in role order.
FailureOr<std::vector<func::FuncOp>> readRoles(ModuleOp module) {
  auto roles = module->getAttrOfType<ArrayAttr>(kRolesAttrName);
  if (!roles)
    return module.emitError() << "the plan needs '" << kRolesAttrName
                              << "', which dit-lower-roles sets";
  std::vector<func::FuncOp> out;
  for (Attribute ref : roles) {
    auto symbol = dyn_cast<FlatSymbolRefAttr>(ref);
    func::FuncOp fn =
        symbol ? SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(module, symbol)
               : func::FuncOp();
    if (!fn)
      return module.emitError() << "'" << kRolesAttrName << "' lists " << ref
                                << ", which is not a function of the module";
    out.push_back(fn);
  }
  return out;
}

/// `dit.role` on a role function: its #dit.role<stage, cfg> coordinates.
FailureOr<std::pair<int64_t, int64_t>> readRole(func::FuncOp fn) {
  auto role = fn->getAttrOfType<dit::RoleAttr>(kRoleAttrName);
  if (!role)
    return fn.emitError() << "needs '" << kRoleAttrName
                          << " = #dit.role<stage = S, cfg = C>', which "
                             "dit-lower-roles sets on every role";
  return std::make_pair(role.getStage(), role.getCfg());
}

/// `dit.rank_roles`: every rank's role index, -1 for an idle rank.
FailureOr<ArrayRef<int64_t>> readRankRoles(ModuleOp module) {
  auto table = module->getAttrOfType<DenseI64ArrayAttr>(kRankRolesAttrName);
  if (!table)
    return module.emitError() << "the plan needs '" << kRankRolesAttrName
                              << " = array<i64: ...>', which dit-lower-roles "
                                 "sets";
  return table.asArrayRef();
}

/// `dit.groups`: per axis name, every group's ranks (#dit.groups, whose
/// verifier has checked that each axis partitions the same ranks).
using Groups = std::map<std::string, std::vector<std::vector<int64_t>>>;
FailureOr<Groups> readGroups(ModuleOp module) {
  auto groups = module->getAttrOfType<dit::GroupsAttr>(kGroupsAttrName);
  if (!groups)
    return module.emitError() << "the plan needs '" << kGroupsAttrName
                              << " = #dit.groups<...>', which dit-mesh-layout "
                                 "sets";
  Groups out;
  for (Axis axis : kAllAxes) {
    auto &axisGroups = out[axisName(axis)];
    for (DenseI64ArrayAttr ranks : groups.of(toMeshAxis(axis)))
      axisGroups.emplace_back(ranks.asArrayRef().begin(), ranks.asArrayRef().end());
  }
  return out;
}

} // namespace

FailureOr<std::vector<RoleProgram>>
readRolePrograms(ModuleOp module, const MeshInfo &mesh, int64_t branches) {
  FailureOr<std::vector<func::FuncOp>> fns = readRoles(module);
  if (failed(fns))
    return failure();
  int64_t cfg = mesh.size(Axis::CFG);
  std::vector<RoleProgram> roles;
  for (func::FuncOp fn : *fns) {
    FailureOr<std::pair<int64_t, int64_t>> coords = readRole(fn);
    if (failed(coords))
      return failure();
    RoleProgram role;
    role.fn = fn;
    std::tie(role.stage, role.cfg) = *coords;
    // dit-lower-roles names the second expert's roles after @denoise_step_2.
    role.expert = fn.getName().starts_with("denoise_step_2") ? "transformer_2"
                                                              : "transformer";
    role.id = "s" + std::to_string(role.stage) + "_c" +
              std::to_string(role.cfg) +
              (role.expert == "transformer_2" ? "_e2" : "");
    role.file = "programs/" + role.id + ".json";
    for (int64_t slot = 0; slot < branches / cfg; ++slot)
      role.branches.push_back(role.cfg * (branches / cfg) + slot);
    roles.push_back(std::move(role));
  }
  return roles;
}

json programEntry(const RoleProgram &role, std::pair<int64_t, int64_t> layers,
                  const StepStats &stats) {
  json perStep = {{"collectives", stats.collectives},
                  {"bytes_sent", stats.bytesSent},
                  {"param_bytes", stats.paramBytes},
                  {"activation_bytes", stats.activationBytes},
                  {"flops", stats.flops}};
  return {{"id", role.id},
          {"file", role.file},
          {"stage", role.stage},
          {"branch", role.branches.empty() ? 0 : role.branches.front()},
          {"branches", role.branches},
          {"expert", role.expert},
          {"layers", {layers.first, layers.second}},
          {"per_step", std::move(perStep)}};
}

FailureOr<json> buildManifest(ModuleOp module, const MeshInfo &mesh,
                              const std::vector<RoleProgram> &roles,
                              json programs, const ModelSpec &spec,
                              const Workload &workload,
                              const Deployment &deployment,
                              const std::vector<PlanWarning> &warnings) {
  FailureOr<ArrayRef<int64_t>> table = readRankRoles(module);
  FailureOr<Groups> groups = readGroups(module);
  if (failed(table) || failed(groups))
    return failure();

  json manifest = {{"format_version", kPlanFormatVersion},
                   {"model", modelSpecJson(spec)},
                   {"workload", workloadJson(workload)}};
  // What dit-run --weights compares a snapshot's config.json with. A spec
  // built by hand (tests) read no config and records none.
  if (!spec.checkpointConfig.empty()) {
    json configs = json::object();
    for (const auto &[component, text] : spec.checkpointConfig)
      configs[component] = json::parse(text);
    manifest["model"]["checkpoint_config"] = std::move(configs);
  }
  // The VAE the plan decodes with (dit-run --output OUT.png, --decode-only).
  if (!spec.vaeConfig.empty())
    manifest["model"]["vae_config"] = json::parse(spec.vaeConfig);
  // The text encoders the plan encodes prompts with (dit-run --prompt).
  if (!spec.textEncoders.empty()) {
    json encoders = json::array();
    for (const ModelSpec::TextEncoderSpec &e : spec.textEncoders)
      encoders.push_back({{"component", e.component},
                          {"class", e.className},
                          {"config", json::parse(e.config)}});
    manifest["model"]["text_encoders"] = std::move(encoders);
  }
  json axes = json::array();
  for (Axis axis : mesh.order)
    axes.push_back({{"name", axisName(axis)}, {"size", mesh.size(axis)}});
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
  manifest["groups"] = *groups;
  json seqAxes = json::array();
  for (Axis a : mesh.sequenceAxes())
    seqAxes.push_back(axisName(a));
  // The patch tokens' feature order is the patch embedding's (the family's
  // unpatchify order); every patch_embed of the module reads the same.
  dit::FeatureOrder order = dit::FeatureOrder::ChannelsLast;
  module.walk([&](dit::PatchEmbedOp op) { order = op.getFeatures(); });
  manifest["latents"] = {
      {"layout", "patch_tokens"},
      {"tokens", workload.imageTokens},
      {"features", spec.latentChannels * spec.patch[0] * spec.patch[1] * spec.patch[2]},
      {"feature_order", dit::stringifyFeatureOrder(order).str()},
      {"split_over", seqAxes}};

  // A rank's coordinate on an axis is its position in its group there.
  std::vector<std::map<std::string, int64_t>> coords(deployment.numGpus);
  for (const auto &[axis, lists] : *groups)
    for (const std::vector<int64_t> &group : lists)
      for (size_t position = 0; position < group.size(); ++position) {
        int64_t rank = group[position];
        if (rank < 0 || rank >= deployment.numGpus)
          return module.emitError()
                 << "'" << kGroupsAttrName << "." << axis << "' lists rank "
                 << rank << ", outside the " << deployment.numGpus << " ranks";
        if (!coords[rank].emplace(axis, int64_t(position)).second)
          return module.emitError()
                 << "'" << kGroupsAttrName << "." << axis << "' lists rank "
                 << rank << " in two places";
      }

  json ranks = json::array();
  size_t perExpert = size_t(mesh.size(Axis::PP) * mesh.size(Axis::CFG));
  std::map<int64_t, std::set<int64_t>> ownRanks = componentRankReplicas(deployment);
  for (int64_t rank = 0; rank < deployment.numGpus; ++rank) {
    int64_t role = rank < int64_t(table->size()) ? (*table)[rank] : -1;
    json entry = {{"rank", rank}};
    if (role < 0) {
      // A rank of a text_encoder or vae instance's own: it serves one
      // replica (component-ranks), whose vote and groups it joins.
      auto served = ownRanks.find(rank);
      if (served == ownRanks.end() || served->second.size() != 1)
        return module.emitError()
               << "rank " << rank << " runs no transformer and serves "
               << (served == ownRanks.end() ? 0 : served->second.size())
               << " replicas through its text_encoder and vae instances; "
                  "world-size and component-ranks hold it to exactly one";
      entry["program"] = nullptr;
      entry["replica"] = *served->second.begin();
      ranks.push_back(entry);
      continue;
    }
    size_t second = perExpert + size_t(role);
    if (size_t(role) >= perExpert ||
        (roles.size() > perExpert && second >= roles.size()))
      return module.emitError()
             << "'" << kRankRolesAttrName << "' gives rank " << rank
             << " role " << role << ", but the module has " << roles.size()
             << " roles (" << perExpert << " per expert)";
    json c = json::object();
    for (Axis axis : kAllAxes) {
      auto found = coords[rank].find(axisName(axis));
      if (found == coords[rank].end())
        return module.emitError()
               << "'" << kGroupsAttrName << "' has no " << axisName(axis)
               << " group holding rank " << rank;
      c[axisName(axis)] = found->second;
    }
    entry["coords"] = c;
    entry["program"] = roles[role].id;
    if (roles.size() > perExpert)
      entry["program_2"] = roles[second].id;
    ranks.push_back(entry);
  }
  manifest["ranks"] = ranks;
  manifest["programs"] = std::move(programs);
  // The VAE's patch parallelism (docs/plan-format.md): each replica's
  // decoding ranks in band order and the latent rows of each band. Without
  // it, each replica's leader decodes alone.
  if (const Placement *vae = deployment.find("vae")) {
    json groupsJson = json::array();
    for (const std::vector<int64_t> &group : vaeDecodeGroups(deployment))
      groupsJson.push_back(group);
    manifest["vae"] = {
        {"parallel_size", vae->vaeParallelSize},
        {"row_split", vaeRowBands(workload.latentHeight, vae->vaeParallelSize,
                                  vae->vaeRowSplit)},
        {"groups", std::move(groupsJson)}};
    // The verified band program's exchanges, in order (every band issues
    // the same ones; dit-verify-collectives proved it): dit-run holds its
    // decoder to them. An opaque decoder has no band programs.
    FailureOr<std::map<int64_t, func::FuncOp>> bands = bandPrograms(module);
    if (failed(bands))
      return failure();
    if (!bands->empty()) {
      json exchanges = json::array();
      for (const BandExchange &e : collectBandExchanges(bands->begin()->second)) {
        json entry = {{"op", e.kind}};
        if (e.kind == "update_halo")
          entry["rows"] = std::max(e.top, e.bottom);
        exchanges.push_back(std::move(entry));
      }
      manifest["vae"]["exchanges"] = std::move(exchanges);
    }
  }
  // The text encoders' tensor parallelism (docs/plan-format.md): each
  // replica's encoding ranks in TP order, and per encoder the all-reduces
  // of its verified TP program, which dit-run holds its encoders to.
  if (const Placement *transformer = deployment.find("transformer");
      transformer && transformer->offload)
    manifest["transformer"] = {{"expert_offload", true}};
  if (const Placement *encoder = deployment.find("text_encoder")) {
    json groupsJson = json::array();
    for (const std::vector<int64_t> &group : textEncoderGroups(deployment))
      groupsJson.push_back(group);
    json encoders = json::array();
    size_t index = 0;
    if (auto fn = module.lookupSymbol<func::FuncOp>("text_encoder"))
      fn.walk([&](dit::ComponentOp op) {
        if (op.getKind() != dit::ComponentKind::TextEncoder || op.getBody().empty())
          return;
        int64_t allReduces = 0;
        op.getBody().walk([&](shard::AllReduceOp) { ++allReduces; });
        std::string component = index < spec.textEncoders.size()
                                    ? spec.textEncoders[index].component
                                    : op.getClassName().str();
        ++index;
        encoders.push_back({{"component", component},
                            {"class", op.getClassName().str()},
                            {"all_reduces", allReduces}});
      });
    manifest["text_encoder"] = {{"tp_size", encoder->degrees[Axis::TP]},
                                {"groups", std::move(groupsJson)},
                                {"offload", encoder->offload},
                                {"encoders", std::move(encoders)}};
  }
  return manifest;
}

} // namespace ditc
