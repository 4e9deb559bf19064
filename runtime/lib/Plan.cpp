//===- Plan.cpp - read and validate a compiled plan -----------------------===//
#include "ditc/Runtime/Plan.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/PlanFormat.h"
#include "ditc/Support/ReadFile.h"
#include "ditc/Support/Sha256.h"

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

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
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

int64_t Manifest::replicaLeader(int64_t replica) const {
  for (const RankEntry &entry : ranks)
    if (entry.coords.at("dp") == replica)
      return entry.rank;
  throw BadInput(path + ": no rank has dp coordinate " + std::to_string(replica));
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

static const char *const kAxisNames[] = {"dp",        "cfg",     "pp", "ring",
                                         "kv_gather", "ulysses", "tp"};

static JsonObject element(const JsonObject &list, const std::string &field,
                          size_t index) {
  return JsonObject(list.file(), &list.raw()[field][index],
                    list.keyPath(field) + "[" + std::to_string(index) + "].");
}

/// Whether a patch-token feature order `order` (the value of `field`) is
/// "channels_first" (C, pt, ph, pw) rather than "channels_last" (pt, ph,
/// pw, C), the meaning of plans that do not say.
static bool channelsFirst(const JsonObject &object, const std::string &field,
                          const std::optional<std::string> &order) {
  if (order && *order != "channels_last" && *order != "channels_first")
    object.fail(field, "is '" + escapeInvalidUtf8(*order) +
                           "'; expected channels_last or channels_first");
  return order == "channels_first";
}

static const json &requireList(const JsonObject &object, const std::string &field) {
  if (!object.has(field) || !object.raw()[field].is_array())
    object.fail(field, "is missing or not a list");
  return object.raw()[field];
}

/// Reads `relative` inside the plan folder `dir`. The file must be a regular
/// file (not a symlink, O_NOFOLLOW), and every folder on the way must
/// resolve inside the plan folder: a plan whose programs/ links elsewhere is
/// refused rather than followed.
static std::string readPlanFile(const std::string &dir,
                                const std::string &relative, int64_t maxBytes,
                                const std::string &what,
                                const std::string &missingHint = "") {
  std::string path = dir + "/" + relative;
  struct stat info;
  if (!missingHint.empty() && ::lstat(path.c_str(), &info) != 0 && errno == ENOENT)
    throw BadInput(escapeInvalidUtf8(path) + ": no such file (" + what + "; " +
                   missingHint + ")");
  char root[PATH_MAX], folder[PATH_MAX];
  std::string parent = path.substr(0, path.find_last_of('/'));
  if (!::realpath(dir.c_str(), root))
    throw BadInput(escapeInvalidUtf8(dir) + ": not a plan folder");
  if (!::realpath(parent.c_str(), folder))
    throw BadInput(escapeInvalidUtf8(path) + ": no such file (" + what + ")");
  std::string rootText = root, folderText = folder;
  if (folderText != rootText && folderText.rfind(rootText + "/", 0) != 0)
    throw BadInput(escapeInvalidUtf8(path) + ": its folder resolves to " +
                   escapeInvalidUtf8(folderText) + ", outside the plan folder " +
                   escapeInvalidUtf8(rootText) +
                   "; plans may not link out of their folder");
  ReadFileOptions options;
  options.refuseSymlink = true;
  options.what = what;
  return readRegularFile(path, maxBytes, options);
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

/// Plans of another format version are refused by name: version 1 plans
/// lack per_step.flops, and a newer one may mean what this reader does not
/// know.
static void checkFormatVersion(const JsonObject &top) {
  int64_t version = top.getInt("format_version", 0, 1 << 20);
  if (version != kPlanFormatVersion)
    top.fail("format_version",
             "is " + std::to_string(version) + "; this dit-run reads format_version " +
                 std::to_string(kPlanFormatVersion) +
                 " only: recompile with this ditc (`ditc compile`)");
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
      {"dit.sincos_pos_embed", OpKind::SincosPosEmbed},
      {"dit.token_mean", OpKind::TokenMean},
      {"dit.attention_pool", OpKind::AttentionPool},
      {"dit.attention", OpKind::Attention},
      {"dit.activation", OpKind::Activation},
      {"dit.concat_streams", OpKind::ConcatStreams},
      {"dit.split_streams", OpKind::SplitStreams},
      {"tensor.concat", OpKind::TensorConcat},
      {"tensor.empty", OpKind::TensorEmpty},
      {"dit.stack", OpKind::Stack},
      {"dit.unstack", OpKind::Unstack},
      {"dit.split", OpKind::Split},
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
    auto kind = opKinds().find(op.name);
    if (kind == opKinds().end())
      object.fail("op", "is '" + escapeInvalidUtf8(op.name.substr(0, 80)) +
                            "', which this dit-run cannot execute");
    op.kind = kind->second;
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
    default:
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

std::vector<int64_t> ranksRunning(const Manifest &manifest, const std::string &id) {
  std::vector<int64_t> out;
  for (const RankEntry &entry : manifest.ranks)
    if (entry.program == id || entry.program2 == id)
      out.push_back(entry.rank);
  return out;
}

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
      "latents", "timestep", "sigma", "sigma_next", "text", "pooled_text", "guidance"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    JsonObject in = element(top, "inputs", i);
    StepInput input;
    input.name = in.getString("name");
    if (!known.count(input.name))
      in.fail("name", "is '" + escapeInvalidUtf8(input.name) +
                          "'; expected one of latents, timestep, sigma, "
                          "sigma_next, text, pooled_text, guidance");
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

const Op *overlappedAttentionAt(const Function &fn, size_t index) {
  if (index + 2 >= fn.ops.size() || fn.ops[index].kind != OpKind::AllToAll)
    return nullptr;
  const Op &attention = fn.ops[index + 2];
  if (attention.kind != OpKind::Attention || attention.a.overlapHeadGroups < 2)
    return nullptr;
  return &attention;
}

const Op *overlappedLinearAt(const Function &fn, size_t index) {
  if (index + 1 >= fn.ops.size() || fn.ops[index].kind != OpKind::Linear)
    return nullptr;
  const Op &reduce = fn.ops[index + 1];
  if (reduce.kind != OpKind::AllReduce || reduce.a.overlapRowChunks < 2)
    return nullptr;
  return &reduce;
}

std::vector<HeadGroupExchange> headGroupSchedule(int64_t groups) {
  std::vector<HeadGroupExchange> order{{false, 0}};
  for (int64_t g = 0; g < groups; ++g) {
    if (g + 1 < groups)
      order.push_back({false, g + 1});
    order.push_back({true, g});
  }
  return order;
}

} // namespace ditc::runtime
