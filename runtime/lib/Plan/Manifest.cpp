//===- Manifest.cpp - a plan's manifest, read and checked -----------------===//
#include "ditc/Runtime/Plan/Manifest.h"
#include "ditc/Runtime/Plan/PlanFile.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/PlanFormat.h"
#include "ditc/Support/ReadFile.h"
#include "ditc/Support/Sha256.h"
#include "ditc/Support/Strings.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <set>
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

/// A rank's coordinates split into those outside `groupAxes` (equal across
/// a group) and those on them (the member's place in the group, row-major in
/// mesh order).
static std::pair<std::vector<int64_t>, std::vector<int64_t>>
splitCoords(const Manifest &m, const RankEntry &entry,
            const std::vector<std::string> &groupAxes) {
  std::pair<std::vector<int64_t>, std::vector<int64_t>> out;
  for (const Axis &a : m.axes) {
    bool inGroup =
        std::find(groupAxes.begin(), groupAxes.end(), a.name) != groupAxes.end();
    (inGroup ? out.second : out.first).push_back(entry.coords.at(a.name));
  }
  return out;
}

std::vector<int64_t>
Manifest::groupOf(int64_t rank, const std::vector<std::string> &groupAxes) const {
  std::vector<int64_t> outside = splitCoords(*this, ranks[rank], groupAxes).first;
  std::vector<std::pair<std::vector<int64_t>, int64_t>> members;
  for (const RankEntry &entry : ranks) {
    if (!entry.program)
      continue;
    auto [theirOutside, inside] = splitCoords(*this, entry, groupAxes);
    if (theirOutside == outside)
      members.push_back({inside, entry.rank});
  }
  std::sort(members.begin(), members.end());
  std::vector<int64_t> out;
  for (auto &member : members)
    out.push_back(member.second);
  return out;
}

std::vector<std::vector<int64_t>>
Manifest::groupsOver(const std::vector<std::string> &groupAxes) const {
  std::map<std::vector<int64_t>, std::vector<std::pair<std::vector<int64_t>, int64_t>>>
      byOutside;
  for (const RankEntry &entry : ranks) {
    if (!entry.program)
      continue;
    auto [outside, inside] = splitCoords(*this, entry, groupAxes);
    byOutside[outside].push_back({inside, entry.rank});
  }
  std::vector<std::vector<int64_t>> groups;
  for (auto &group : byOutside) {
    std::sort(group.second.begin(), group.second.end());
    groups.emplace_back();
    for (const auto &member : group.second)
      groups.back().push_back(member.second);
  }
  return groups;
}

Manifest::GroupPlaces Manifest::groupPlaces(const std::vector<std::string> &axes) const {
  GroupPlaces out;
  out.size.assign(ranks.size(), 0);
  out.index.assign(ranks.size(), -1);
  for (const std::vector<int64_t> &group : groupsOver(axes))
    for (size_t i = 0; i < group.size(); ++i) {
      out.size[group[i]] = int64_t(group.size());
      out.index[group[i]] = int64_t(i);
    }
  return out;
}

std::string formatShape(const std::vector<int64_t> &shape) { return bracketedList(shape); }

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

int64_t Manifest::replicaLeader(int64_t replica) const {
  for (const RankEntry &entry : ranks)
    if (entry.program && entry.coords.at("dp") == replica)
      return entry.rank;
  throw BadInput(path + ": no rank has dp coordinate " + std::to_string(replica));
}

std::vector<int64_t> Manifest::vaeDecoders(int64_t replica) const {
  if (vaeGroups.empty())
    return {replicaLeader(replica)};
  return vaeGroups.at(size_t(replica));
}

std::vector<int64_t> Manifest::textEncoders(int64_t replica) const {
  if (textEncoderGroups.empty())
    return {};
  return textEncoderGroups.at(size_t(replica));
}

std::vector<int64_t> Manifest::vaeBands() const {
  if (vaeRowSplit.empty())
    return {latentHeight};
  return vaeRowSplit;
}

std::vector<int64_t> Manifest::outputHolders(int64_t replica) const {
  int64_t lastStage = axisSize("pp") - 1;
  std::vector<int64_t> holders(latentBlocks(), -1);
  for (const RankEntry &entry : ranks) {
    if (!entry.program || entry.coords.at("pp") != lastStage ||
        entry.coords.at("dp") != replica || entry.coords.at("cfg") != 0 ||
        entry.coords.at("tp") != 0)
      continue;
    int64_t block = latentBlock(entry.rank);
    if (holders[block] < 0)
      holders[block] = entry.rank;
  }
  for (size_t b = 0; b < holders.size(); ++b)
    if (holders[b] < 0)
      throw BadInput(path + ": no rank of the last stage of replica " +
                     std::to_string(replica) + " holds latent block " +
                     std::to_string(b));
  return holders;
}

/// The manifest's `groups` (written for readers; the runtime derives its
/// groups from the coordinates) must say what the coordinates say: for each
/// axis, every rank in exactly one group, each group the ranks that differ
/// only on that axis, listed by ascending coordinate. A plan whose groups
/// disagree with its layout was edited or built by something else.
static void checkGroups(const Manifest &m, const JsonObject &top) {
  if (!top.has("groups"))
    return;
  JsonObject groups = top.getObject("groups");
  for (const Axis &axis : m.axes) {
    if (!groups.has(axis.name))
      continue;
    std::vector<std::vector<int64_t>> lists =
        groups.getIntLists(axis.name, 0, m.worldSize() - 1);
    std::vector<char> seen(m.ranks.size(), 0);
    for (size_t g = 0; g < lists.size(); ++g) {
      const std::vector<int64_t> &members = lists[g];
      std::string field = axis.name + "[" + std::to_string(g) + "]";
      if (int64_t(members.size()) != axis.size)
        groups.fail(field, "lists " + std::to_string(members.size()) +
                               " ranks, but axis " + axis.name + " has size " +
                               std::to_string(axis.size));
      for (size_t i = 0; i < members.size(); ++i) {
        const RankEntry &member = m.ranks[members[i]];
        if (!member.program)
          groups.fail(field, "lists rank " + std::to_string(members[i]) +
                                 ", which runs no transformer program");
        if (seen[members[i]]++)
          groups.fail(field, "lists rank " + std::to_string(members[i]) +
                                 ", which another " + axis.name +
                                 " group already holds");
        bool sameElsewhere = true;
        for (const Axis &other : m.axes)
          if (other.name != axis.name &&
              member.coords.at(other.name) != m.ranks[members[0]].coords.at(other.name))
            sameElsewhere = false;
        if (!sameElsewhere || member.coords.at(axis.name) != int64_t(i))
          groups.fail(field, "lists rank " + std::to_string(members[i]) +
                                 " at position " + std::to_string(i) +
                                 ", but its coordinates put it elsewhere in the " +
                                 axis.name + " groups");
      }
    }
  }
}
std::string BandExchange::describe() const {
  if (op != "update_halo")
    return op;
  return op + " of " + std::to_string(rows) + (rows == 1 ? " row" : " rows");
}

/// A section's `groups`: one list of `size` distinct ranks with programs
/// per dp replica, inside that replica (`why` says why), indexed by the
/// replica's dp coordinate.
static std::vector<std::vector<int64_t>> readReplicaGroups(const JsonObject &section,
                                                           const Manifest &m, int64_t size,
                                                           const std::string &sizeField,
                                                           const std::string &why) {
  std::vector<std::vector<int64_t>> groups =
      section.getIntLists("groups", 0, m.worldSize() - 1);
  int64_t replicas = m.axisSize("dp");
  if (int64_t(groups.size()) != replicas)
    section.fail("groups", "lists " + std::to_string(groups.size()) +
                               " groups; the mesh has " + std::to_string(replicas) +
                               " dp replicas, one group each");
  std::vector<std::vector<int64_t>> byReplica(static_cast<size_t>(replicas));
  std::vector<bool> claimed(static_cast<size_t>(replicas), false);
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<int64_t> &group = groups[g];
    std::string where = "groups[" + std::to_string(g) + "]";
    if (int64_t(group.size()) != size)
      section.fail(where, "lists " + std::to_string(group.size()) + " ranks; " + sizeField +
                              " is " + std::to_string(size));
    int64_t replica = m.ranks[size_t(group.front())].coords.at("dp");
    for (int64_t rank : group) {
      if (!m.ranks[size_t(rank)].program && !m.ranks[size_t(rank)].ownRanks)
        section.fail(where, "names rank " + std::to_string(rank) +
                                ", which has no program in this plan");
      if (m.ranks[size_t(rank)].coords.at("dp") != replica)
        section.fail(where, "mixes ranks of dp replicas " + std::to_string(replica) + " and " +
                                std::to_string(m.ranks[size_t(rank)].coords.at("dp")) + "; " +
                                why);
      if (std::count(group.begin(), group.end(), rank) > 1)
        section.fail(where, "names rank " + std::to_string(rank) + " twice");
    }
    if (claimed[size_t(replica)])
      section.fail(where, "is a second group for dp replica " + std::to_string(replica));
    claimed[size_t(replica)] = true;
    byReplica[size_t(replica)] = group;
  }
  return byReplica;
}

/// The text_encoder section: each replica's encoding ranks in TP order,
/// inside the replica, one group per replica; the offload switch; and each
/// encoder's all-reduce count, which the TP encoders are held to.
static void readTextEncoderSection(const JsonObject &section, Manifest &m) {
  int64_t world = m.worldSize();
  m.textEncoderTp = section.getInt("tp_size", 1, world);
  m.textEncoderOffload = section.getOptionalBool("offload", false);
  m.textEncoderGroups = readReplicaGroups(section, m, m.textEncoderTp, "tp_size",
                                          "a replica's prompts are encoded by its own ranks");
  // One T5 layer has two all-reduces; 1024 layers is far beyond any encoder.
  constexpr int64_t kMaxAllReduces = 4096;
  // Empty when the model holds no encoder graphs (a bare transformer, or
  // Qwen-Image's encoder): tp_size is then 1 (text-encoder-heads), and a
  // split encoder without an entry is refused when the encoders are read.
  for (const JsonObject &entry :
       section.getObjectList("encoders", "must list each encoder's TP program", true)) {
    std::string component = entry.getString("component");
    if (component != "text_encoder" && component != "text_encoder_2" &&
        component != "text_encoder_3")
      entry.fail("component", "is '" + component.substr(0, 100) +
                                  "'; expected text_encoder, text_encoder_2 or text_encoder_3");
    entry.getString("class");
    if (m.textEncoderAllReduces.count(component))
      entry.fail("component", "names " + component + " twice");
    m.textEncoderAllReduces[component] = entry.getInt("all_reduces", 0, kMaxAllReduces);
  }
}

/// The vae section: each replica's decoding ranks, band by band, and the
/// latent rows of each band. Checked against the mesh so that every rank
/// agrees on who decodes which rows before any of them starts.
static void readVaeSection(const JsonObject &vae, Manifest &m) {
  // A convolution's reach beyond its row: 1 for the 3x3 kernels of every
  // supported decoder; wider kernels stay far below this.
  constexpr int64_t kMaxHaloRows = 64;
  int64_t world = m.worldSize();
  int64_t size = vae.getInt("parallel_size", 1, world);
  m.vaeRowSplit = vae.getIntList("row_split", 1, m.latentHeight);
  if (int64_t(m.vaeRowSplit.size()) != size)
    vae.fail("row_split", "lists " + std::to_string(m.vaeRowSplit.size()) +
                              " bands; parallel_size is " + std::to_string(size));
  int64_t rows = 0;
  for (int64_t band : m.vaeRowSplit)
    rows += band;
  if (rows != m.latentHeight)
    vae.fail("row_split", "covers " + std::to_string(rows) +
                              " latent rows; the workload's latents have " +
                              std::to_string(m.latentHeight) +
                              " (each band needs at least 1 row)");
  m.vaeGroups = readReplicaGroups(vae, m, size, "parallel_size",
                                  "a replica's latents are decoded by its own ranks");
  if (size == 1)
    return;
  // The band program dit-verify-collectives proved: a decoder that issued
  // anything else would hang its bands or decode other pixels.
  if (!vae.has("exchanges"))
    vae.fail("exchanges", "is missing: a plan that splits the decode over " +
                              std::to_string(size) +
                              " bands lists its band program's exchanges (ditc "
                              "compile writes them)");
  for (const JsonObject &entry :
       vae.getObjectList("exchanges", "must list the band program's exchanges", true)) {
    BandExchange e;
    e.op = entry.getString("op");
    if (e.op == "update_halo")
      e.rows = entry.getInt("rows", 1, kMaxHaloRows);
    else if (e.op != "all_reduce_stats" && e.op != "all_gather_kv")
      entry.fail("op", "is '" + e.op.substr(0, 100) +
                           "', not a band exchange; one of update_halo, all_reduce_stats, "
                           "all_gather_kv");
    else if (entry.has("rows"))
      entry.fail("rows", "belongs to update_halo only");
    m.vaeExchanges.push_back(std::move(e));
  }
}

Manifest loadManifest(const std::string &dir) {
  Manifest m;
  m.dir = dir;
  m.path = dir + "/manifest.json";
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    throw BadInput(escapeInvalidUtf8(dir) +
                   ": not a plan folder (expected a folder written by "
                   "`ditc compile`)");
  json raw = JsonObject::parseText(
      readPlanFile(dir, "manifest.json", kMaxJsonFileBytes, "plan manifest"),
      escapeInvalidUtf8(m.path));
  if (!raw.is_object())
    throw BadInput(escapeInvalidUtf8(m.path) + ": expected a JSON object");
  JsonObject top(escapeInvalidUtf8(m.path), &raw);
  checkFormatVersion(top);
  m.planHash = top.getString("plan_hash");

  JsonObject model = top.getObject("model");
  m.modelName = model.getString("name");
  m.family = escapeInvalidUtf8(model.getOptionalString("family").value_or(""));
  m.latentChannels = model.getInt("latent_channels", 1, kAbsurdSize);
  m.textEmbedDim = model.getInt("text_embed_dim", 0, kAbsurdSize);
  m.pooledDim = model.getInt("pooled_dim", 0, kAbsurdSize);
  m.experts = model.getInt("experts", 1, 2);
  m.patch = model.getIntList("patch", 1, 64);
  if (m.patch.size() != 3)
    model.fail("patch", "has " + std::to_string(m.patch.size()) +
                            " entries, expected [t, h, w]");
  m.boundaryRatio = model.getOptionalDouble("boundary_ratio", 0.875, 0.0, 1.0);
  // What dit-run --weights compares a snapshot's config.json with: one
  // object per transformer component the plan runs.
  if (model.has("checkpoint_config")) {
    JsonObject configs = model.getObject("checkpoint_config");
    for (auto it = configs.raw().begin(); it != configs.raw().end(); ++it) {
      bool known = it.key() == "transformer" ||
                   (it.key() == "transformer_2" && m.experts == 2);
      if (!known)
        configs.fail(it.key(), "is not a transformer component of this plan; "
                               "expected transformer" +
                                   std::string(m.experts == 2 ? " and transformer_2" : ""));
      if (!it.value().is_object())
        configs.fail(it.key(), "must be the component's config.json object");
      m.checkpointConfig[it.key()] = it.value();
    }
  }

  if (model.has("text_encoders"))
    for (const JsonObject &entry : model.getObjectList(
             "text_encoders", "must list the text encoders' configs", false)) {
      std::string component = entry.getString("component");
      entry.getString("class");
      if (!entry.has("config") || !entry.raw().at("config").is_object())
        entry.fail("config", "must be the text encoder's config.json object");
      m.textEncoderConfigs[component] = entry.raw().at("config");
    }
  if (model.has("vae_config")) {
    if (!model.raw().at("vae_config").is_object())
      model.fail("vae_config", "must be the VAE's config.json object");
    m.vaeConfig = model.raw().at("vae_config");
  }

  JsonObject work = top.getObject("workload");
  m.batch = work.getInt("batch", 1, kAbsurdSize);
  m.latentFrames = work.getInt("latent_frames", 1, kAbsurdSize);
  m.latentHeight = work.getInt("latent_height", 1, kAbsurdSize);
  m.latentWidth = work.getInt("latent_width", 1, kAbsurdSize);
  m.textTokens = work.getInt("text_tokens", 0, kAbsurdSize);
  m.branches = work.getInt("branches", 1, 16);
  m.steps = work.getInt("steps", 1, 100000);
  m.guidanceScale = work.getOptionalDouble("guidance_scale", 1.0, -1e6, 1e6);
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
  // Each size is at most 2^20, so the product is checked as it grows.
  int64_t world = 1;
  for (const Axis &a : m.axes) {
    world *= a.size;
    if (world > (1 << 20))
      mesh.fail("axes", "sizes multiply past 1048576 ranks");
  }
  // The transformer's ranks are the mesh; a text_encoder or vae instance
  // may hold ranks of its own beyond them (a disaggregated placement).
  int64_t numGpus = mesh.getInt("num_gpus", 1, 1 << 20);
  if (numGpus < world)
    mesh.fail("num_gpus", "is " + std::to_string(numGpus) +
                              " but the axis sizes multiply to " +
                              std::to_string(world));

  const json &programs = requireList(top, "programs");
  std::string programHashes;
  for (size_t i = 0; i < programs.size(); ++i) {
    JsonObject p = element(top, "programs", i);
    ProgramEntry entry{p.getString("id"), p.getString("file"), p.getString("sha256")};
    if (entry.file.find("..") != std::string::npos || entry.file.empty() ||
        entry.file[0] == '/' || entry.file.back() == '/')
      p.fail("file", "is '" + escapeInvalidUtf8(entry.file) +
                         "'; expected a file path inside the plan folder");
    if (entry.sha256.size() != 64 ||
        entry.sha256.find_first_not_of("0123456789abcdef") != std::string::npos)
      p.fail("sha256", "is '" + escapeInvalidUtf8(entry.sha256.substr(0, 80)) +
                           "'; expected 64 lowercase hex digits");
    if (p.has("per_step")) {
      // Read for the memory check before loading (MemoryCheck.h), which
      // sums them with saturating arithmetic.
      JsonObject step = p.getObject("per_step");
      entry.paramBytes = step.getInt("param_bytes", 0, int64_t(1) << 62);
      entry.activationBytes = step.getInt("activation_bytes", 0, int64_t(1) << 62);
    }
    for (const ProgramEntry &other : m.programs)
      if (other.id == entry.id)
        p.fail("id", "is '" + escapeInvalidUtf8(entry.id) +
                         "', which an earlier program already uses");
    programHashes += entry.sha256;
    m.programs.push_back(entry);
  }

  const json &ranks = requireList(top, "ranks");
  if (int64_t(ranks.size()) != numGpus)
    top.fail("ranks", "lists " + std::to_string(ranks.size()) +
                          " ranks but mesh.num_gpus is " + std::to_string(numGpus));
  // A rank with a program sits in the mesh (coords); one without serves a
  // replica's text encoding or VAE decode from ranks of its own, and names
  // that replica, whose vote and groups it joins.
  int64_t dpSize = m.axisSize("dp"), meshRanks = 0;
  std::set<std::vector<int64_t>> taken;
  for (size_t i = 0; i < ranks.size(); ++i) {
    JsonObject r = element(top, "ranks", i);
    RankEntry entry;
    entry.rank = r.getInt("rank", 0, numGpus - 1);
    if (entry.rank != int64_t(i))
      r.fail("rank", "is " + std::to_string(entry.rank) + "; expected " +
                         std::to_string(i) + " (ranks in order)");
    if (r.has("program")) {
      entry.program = r.getString("program");
      m.programEntry(*entry.program);
    }
    if (r.has("program_2")) {
      if (!entry.program)
        r.fail("program_2", "is given to a rank without a program");
      entry.program2 = r.getString("program_2");
      m.programEntry(*entry.program2);
    }
    if (entry.program) {
      if (r.has("replica"))
        r.fail("replica", "is given to a rank with a program, whose coords.dp says its "
                          "replica");
      JsonObject coords = r.getObject("coords");
      std::vector<int64_t> point;
      for (const Axis &a : m.axes) {
        entry.coords[a.name] = coords.getInt(a.name, 0, a.size - 1);
        point.push_back(entry.coords[a.name]);
      }
      if (!taken.insert(point).second)
        r.fail("coords", "repeat an earlier rank's; each mesh point holds one rank");
      ++meshRanks;
    } else {
      if (r.has("coords"))
        r.fail("coords", "are given to a rank without a program; it names the replica it "
                         "serves in 'replica'");
      for (const Axis &a : m.axes)
        entry.coords[a.name] = 0;
      entry.coords["dp"] = r.getInt("replica", 0, dpSize - 1);
      entry.ownRanks = true;
    }
    m.ranks.push_back(entry);
  }
  if (meshRanks != world)
    top.fail("ranks", "gives programs to " + std::to_string(meshRanks) +
                          " ranks but the mesh has " + std::to_string(world));

  checkGroups(m, top);

  JsonObject latents = top.getObject("latents");
  if (latents.getString("layout") != "patch_tokens")
    latents.fail("layout", "is '" + latents.getString("layout") +
                               "'; this dit-run reads 'patch_tokens'");
  m.latentTokens = latents.getInt("tokens", 1, kAbsurdSize);
  m.channelsFirst = channelsFirst(latents, "feature_order",
                                  latents.getOptionalString("feature_order"));
  m.latentFeatures = latents.getInt("features", 1, kAbsurdSize);
  const json &splitOver = requireList(latents, "split_over");
  for (const json &axis : splitOver) {
    if (!axis.is_string() || !seen.count(axis.get<std::string>()))
      latents.fail("split_over", "names " + describeJson(axis) + ", not a mesh axis");
    std::string name = axis.get<std::string>();
    if (std::count(m.latentsSplitOver.begin(), m.latentsSplitOver.end(), name))
      latents.fail("split_over", "names '" + name + "' twice; each axis splits "
                                 "the latents at most once");
    m.latentsSplitOver.push_back(name);
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
  // Every rank with a program draws these whole (noise, text and pooled text
  // of every branch) and rank 0 assembles the latents: bound them before
  // anything is allocated.
  for (const auto &[what, dims] :
       {std::pair<const char *, std::vector<int64_t>>{
            "latents", {m.batch, m.latentTokens, m.latentFeatures}},
        {"text", {m.batch, m.textTokens, m.textEmbedDim}},
        {"pooled text", {m.batch, m.pooledDim}}}) {
    int64_t elements = 1;
    for (int64_t d : dims) // each d <= 2^24: no overflow before the cap
      elements = std::min(elements * d, kMaxValueElements + 1);
    if (elements > kMaxValueElements)
      work.fail("batch", std::string("makes the ") + what + " hold more than " +
                             std::to_string(kMaxValueElements) +
                             " elements per branch");
  }
  if (m.latentTokens % m.latentBlocks())
    latents.fail("split_over", "splits " + std::to_string(m.latentTokens) +
                                   " tokens into " +
                                   std::to_string(m.latentBlocks()) +
                                   " blocks, which does not divide");

  if (top.has("vae"))
    readVaeSection(top.getObject("vae"), m);
  if (top.has("text_encoder"))
    readTextEncoderSection(top.getObject("text_encoder"), m);
  // A rank without a program works only in its replica's text encoding or
  // VAE decode; one in neither would run nothing while the others wait.
  for (const RankEntry &entry : m.ranks) {
    if (!entry.ownRanks)
      continue;
    int64_t replica = entry.coords.at("dp");
    std::vector<int64_t> encoders = m.textEncoders(replica);
    std::vector<int64_t> decoders =
        m.vaeGroups.empty() ? std::vector<int64_t>() : m.vaeDecoders(replica);
    if (!std::count(encoders.begin(), encoders.end(), entry.rank) &&
        !std::count(decoders.begin(), decoders.end(), entry.rank))
      element(top, "ranks", size_t(entry.rank))
          .fail("replica", "is " + std::to_string(replica) + ", but rank " +
                               std::to_string(entry.rank) +
                               " is in neither text_encoder.groups nor vae.groups of that "
                               "replica; a rank without a program encodes or decodes for it");
  }
  if (top.has("transformer")) {
    JsonObject transformer = top.getObject("transformer");
    m.expertOffload = transformer.getOptionalBool("expert_offload", false);
    if (m.expertOffload && m.experts != 2)
      transformer.fail("expert_offload",
                       "is true, but the plan's model has " + std::to_string(m.experts) +
                           " expert; offload keeps one of two experts resident");
  }

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

} // namespace ditc::runtime
