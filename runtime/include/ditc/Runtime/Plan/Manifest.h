//===- Manifest.h - a plan's manifest as the runtime reads it ---*- C++ -*-===//
//
// The runtime's view of a plan folder's manifest.json (docs/plan-format.md):
// the model, the workload, the mesh and each rank's coordinates and
// programs. Every field is checked while it is read, so a corrupt or foreign
// plan is refused with exit 2 before any rank joins the rendezvous. No MLIR
// here: plans cross into the runtime as files.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_PLAN_MANIFEST_H
#define DITC_RUNTIME_PLAN_MANIFEST_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ditc::runtime {

/// The mesh axes a plan may name, outermost first.
inline constexpr const char *kAxisNames[] = {"dp",        "cfg",     "pp", "ring",
                                             "kv_gather", "ulysses", "tp"};

/// No value (and no shape field of the manifest) may hold more elements.
constexpr int64_t kMaxValueElements = int64_t(1) << 31;

struct Axis {
  std::string name;
  int64_t size;
};

struct RankEntry {
  int64_t rank = 0;
  std::map<std::string, int64_t> coords;
  std::optional<std::string> program, program2;
  /// A rank without a program, of a text_encoder or vae instance's own: its
  /// coords are zero but for dp, the replica it serves (plan `replica`).
  bool ownRanks = false;
};

struct ProgramEntry {
  std::string id, file, sha256;
  /// per_step.param_bytes and per_step.activation_bytes, in the plan's
  /// element type; -1 when the entry has no per_step (the memory check
  /// then has no activation figure for the program).
  int64_t paramBytes = -1, activationBytes = -1;
};

/// One exchange of the VAE's band program as the plan lists it:
/// update_halo (with the rows read from each neighbour), all_reduce_stats
/// (GroupNorm's sums) or all_gather_kv (the mid-block attention's K and V).
struct BandExchange {
  std::string op;
  int64_t rows = 0; // update_halo only
  bool operator==(const BandExchange &other) const {
    return op == other.op && rows == other.rows;
  }
  bool operator!=(const BandExchange &other) const { return !(*this == other); }
  /// "update_halo of 1 row", "all_gather_kv": for messages.
  std::string describe() const;
};

struct Manifest {
  std::string dir, path;
  std::string planHash;
  // model
  std::string modelName;
  std::string family; // model.family ("wan", "flux", ...): how its pipeline steps
  int64_t latentChannels = 0, textEmbedDim = 0, pooledDim = 0, experts = 1;
  std::vector<int64_t> patch; // [t, h, w]
  double boundaryRatio = 0.875;
  /// model.checkpoint_config: each transformer component's config.json
  /// without its "_" keys; empty for a plan compiled before it was recorded.
  std::map<std::string, nlohmann::json> checkpointConfig;
  /// model.vae_config: the snapshot's vae/config.json the plan was compiled
  /// from (null when the model came without one); checked by the VAE code
  /// when a run decodes (Vae/VaeModel.h).
  nlohmann::json vaeConfig;
  // workload
  int64_t batch = 1, latentFrames = 0, latentHeight = 0, latentWidth = 0;
  int64_t textTokens = 0, branches = 1, steps = 1;
  double guidanceScale = 1.0; // workload.guidance_scale
  // mesh
  std::vector<Axis> axes; // outermost first
  std::vector<RankEntry> ranks;
  std::vector<ProgramEntry> programs;
  std::vector<std::string> latentsSplitOver;
  int64_t latentTokens = 0, latentFeatures = 0;
  /// latents.feature_order: each token's features are (C, pt, ph, pw) when
  /// true, (pt, ph, pw, C) otherwise (the family's unpatchify order).
  bool channelsFirst = false;
  /// vae: the ranks that decode each replica's latents, band by band
  /// (indexed by dp coordinate), and the latent rows of each band. Empty
  /// when the plan has no vae section: each replica's leader decodes alone.
  std::vector<std::vector<int64_t>> vaeGroups;
  std::vector<int64_t> vaeRowSplit;
  /// vae.exchanges: the verified band program's exchanges in program order
  /// (plans that split the decode over two or more bands); the decoder
  /// must issue exactly these in each decode pass (Driver/VaeDecodeGroup.h).
  std::vector<BandExchange> vaeExchanges;
  /// model.text_encoders: the text encoders' configs the plan was compiled
  /// from, by component ("text_encoder_2"); empty when the snapshot had
  /// none. A --weights snapshot whose configs differ is refused.
  std::map<std::string, nlohmann::json> textEncoderConfigs;
  /// text_encoder: the ranks that encode each replica's prompts in TP
  /// order (indexed by dp coordinate), whether the encoders are freed once
  /// the prompts are encoded, and each encoder's all-reduces in its TP
  /// program (component -> count). Empty groups when the plan has no
  /// text_encoder section: every rank encodes its prompts, whole.
  std::vector<std::vector<int64_t>> textEncoderGroups;
  int64_t textEncoderTp = 1;
  bool textEncoderOffload = false;
  std::map<std::string, int64_t> textEncoderAllReduces;
  /// The transformer section's expert_offload: a two-expert plan keeps only
  /// the running expert's parameters resident.
  bool expertOffload = false;

  int64_t worldSize() const { return int64_t(ranks.size()); }
  int64_t axisSize(const std::string &axis) const;
  const ProgramEntry &programEntry(const std::string &id) const;
  /// Ranks that differ from `rank` only on `axes`, ordered row-major over
  /// their coordinates on those axes in mesh order: the group a collective
  /// over `axes` runs on, in the order its in-group indices count.
  std::vector<int64_t> groupOf(int64_t rank,
                               const std::vector<std::string> &axes) const;
  /// Every group over `axes` of the ranks that have a program, each ordered
  /// as groupOf orders one rank's group: all of them in one pass.
  std::vector<std::vector<int64_t>>
  groupsOver(const std::vector<std::string> &axes) const;
  /// Per global rank, the size of its group over `axes` and its index in
  /// it (0 and -1 for a rank without a program), from groupsOver: one pass
  /// over the ranks rather than a groupOf per rank.
  struct GroupPlaces {
    std::vector<int64_t> size, index;
  };
  GroupPlaces groupPlaces(const std::vector<std::string> &axes) const;
  /// Index of the latent token block `rank` holds: row-major over its
  /// coordinates on the split_over axes.
  int64_t latentBlock(int64_t rank) const;
  int64_t latentBlocks() const;
  /// The ranks whose final latents make up replica `replica`'s output: last
  /// pipeline stage, that dp coordinate, cfg 0, tp 0, one per latent block,
  /// ordered by block.
  std::vector<int64_t> outputHolders(int64_t replica = 0) const;
  /// The rank that writes replica `replica`'s outputs: its lowest rank.
  int64_t replicaLeader(int64_t replica) const;
  /// The ranks that decode replica `replica`'s latents, in band order: the
  /// plan's vae group, or the leader alone.
  std::vector<int64_t> vaeDecoders(int64_t replica) const;
  /// The latent rows of each band of vaeDecoders (all rows for one rank).
  std::vector<int64_t> vaeBands() const;
  /// The ranks that encode replica `replica`'s prompts, in TP order: the
  /// plan's text_encoder group; empty when every rank encodes its own.
  std::vector<int64_t> textEncoders(int64_t replica) const;
};

/// "[1, 16, 32]": a shape as messages and logs show it.
std::string formatShape(const std::vector<int64_t> &shape);

/// Reads PLAN_DIR/manifest.json; checks every field the runtime uses and
/// recomputes plan_hash. Throws BadInput naming the file, field and value.
Manifest loadManifest(const std::string &dir);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_PLAN_MANIFEST_H
