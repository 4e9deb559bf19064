//===- Deployment.h - parallel degrees, placements and rank lists -*- C++ -*-===//
//
// A Deployment is the parallel configuration the legality rules judge: the
// world size, the node shape, and for each pipeline component its degrees,
// attention backend, KV cache and replica rank lists. It comes from
// SGLang-style flags or from a deployment JSON file, and travels through IR
// as #dit.deployment. Nothing here depends on MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_ANALYSIS_DEPLOYMENT_H
#define DITC_ANALYSIS_DEPLOYMENT_H

#include "ditc/Importer/ModelSpec.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace ditc {

/// The seven mesh axes, in the default layout order (outermost first).
enum class Axis { DP, CFG, PP, Ring, KVGather, Ulysses, TP };
constexpr std::array<Axis, 7> kAllAxes = {Axis::DP,       Axis::CFG,
                                          Axis::PP,       Axis::Ring,
                                          Axis::KVGather, Axis::Ulysses,
                                          Axis::TP};
/// "dp", "cfg", "pp", "ring", "kv_gather", "ulysses", "tp".
const char *axisName(Axis axis);
std::optional<Axis> axisFromName(const std::string &name);

/// The largest degree of one axis that flags and deployment files accept.
constexpr int64_t kMaxParallelDegree = 4096;

struct Degrees {
  std::array<int64_t, 7> sizes{1, 1, 1, 1, 1, 1, 1};

  int64_t &operator[](Axis axis) { return sizes[size_t(axis)]; }
  int64_t operator[](Axis axis) const { return sizes[size_t(axis)]; }
  /// dp x cfg x pp x ring x kv_gather x ulysses x tp.
  int64_t worldSize() const;
  /// Ranks in one replica: every degree but dp.
  int64_t instanceSize() const;
  /// Ways the image sequence is split: ulysses x ring x kv_gather.
  int64_t sequenceShards() const;
  /// "dp 1 x cfg 2 x ... x tp 2" for messages.
  std::string describe(bool withDp = true) const;
  bool operator==(const Degrees &other) const { return sizes == other.sizes; }
};

struct Placement {
  std::string component;
  Degrees degrees;
  std::optional<std::string> backend;
  bool pagedKVCache = false;
  std::vector<int64_t> ppPartition;              // empty: the default split
  std::vector<std::vector<int64_t>> instances;   // one rank list per replica
  bool explicitInstances = false;                // from a deployment file
  /// The vae component only: the ranks that decode one replica's latents,
  /// each holding a band of latent rows (patch parallelism), and the rows
  /// of each band when the plan states an uneven split (empty: equal bands).
  int64_t vaeParallelSize = 1;
  std::vector<int64_t> vaeRowSplit;
  /// The text_encoder component: free the encoders' weights once the
  /// prompts are encoded (--text-encoder-offload, "offload": true). The
  /// transformer of a two-expert model (Wan 2.2 A14B): keep only the
  /// active expert's weights resident, loading the second at the switch
  /// in place of the first (--expert-offload, "offload": true).
  bool offload = false;
};

struct Signal {
  std::string from, to;
  std::optional<int64_t> shardDim;
};

/// A note produced while resolving flags (e.g. --sp-degree), reported with
/// the rule diagnostics.
struct ResolutionNote {
  std::string rule;
  std::string message;
};

struct Deployment {
  int64_t numGpus = 1;
  std::optional<int64_t> nnodes, gpusPerNode;
  std::vector<Placement> placements;
  std::vector<Signal> signals;
  std::vector<ResolutionNote> notes;
  /// Mesh axes outermost first; empty means the default order.
  std::vector<Axis> meshOrder;

  const Placement *find(const std::string &component) const;
  Placement *find(const std::string &component);
  /// Ranks per node: gpus_per_node, or num_gpus / nnodes when only nnodes
  /// is given and divides; nullopt when the deployment does not say how
  /// ranks map to nodes.
  std::optional<int64_t> ranksPerNode() const;
};

/// Attention backends ditc knows, and whether each can merge ring hops (it
/// returns the softmax LSE the online-softmax merge needs).
struct AttentionBackend {
  const char *name;
  bool supportsRingRotation;
};
const std::vector<AttentionBackend> &knownAttentionBackends();
const AttentionBackend *findAttentionBackend(const std::string &name);
constexpr const char *kDefaultAttentionBackend = "fa";

/// "[0, 1, 2]", for messages about rank lists and groups (and the other
/// integer lists of a placement, such as a VAE row split).
std::string rankList(const std::vector<int64_t> &ranks);

/// Components a deployment may place.
const std::vector<std::string> &knownComponents();

/// The replicas' rank lists when a placement gives none: replica d holds the
/// ranks whose dp coordinate is d in the row-major layout over `order`
/// (the default order when empty), which makes them contiguous blocks when
/// dp is outermost.
std::vector<std::vector<int64_t>>
defaultInstances(const Degrees &degrees, const std::vector<Axis> &order = {});

/// Parses "dp,cfg,pp,ring,kv_gather,ulysses,tp" (a permutation of the seven
/// axis names); throws BadInput naming `where` otherwise.
std::vector<Axis> parseMeshOrder(const std::string &where,
                                 const std::string &text);

/// The ranks that decode each transformer replica's final latents, one
/// list per replica in row-band order: the vae placement's instances when a
/// deployment file lists them, else the first vae_parallel_size ranks of the
/// replica (its leader first, since it holds the gathered latents). A list
/// may be shorter than vae_parallel_size when the replica has fewer ranks;
/// the vae-ranks rule reports that.
std::vector<std::vector<int64_t>> vaeDecodeGroups(const Deployment &deployment);

/// The ranks that encode each transformer replica's prompts, one list per
/// replica in TP order: the first listed text_encoder instance inside the
/// replica when a deployment file lists them (the replica's other instances
/// hold no encoder: they receive the broadcast; text-encoder-ranks warns),
/// else the first tp_size ranks of the replica
/// (its leader first). Empty when the deployment places no text_encoder:
/// then every rank encodes its own prompts, whole. A list may be shorter
/// than tp_size when the replica has fewer ranks; the text-encoder-ranks
/// rule reports that.
std::vector<std::vector<int64_t>> textEncoderGroups(const Deployment &deployment);

/// The latent rows of each of `groupSize` bands over `latentRows` rows:
/// `split` when given, else equal bands with the remainder on the first
/// ones.
std::vector<int64_t> vaeRowBands(int64_t latentRows, int64_t groupSize,
                                 const std::vector<int64_t> &split);

/// Which transformer replica holds each rank, looked up once per question
/// (a world may hold a million ranks).
class TransformerRanks {
public:
  explicit TransformerRanks(const Deployment &deployment);
  /// The replica whose rank list holds `rank`; nullopt for a rank the
  /// transformer does not use.
  std::optional<size_t> replicaOf(int64_t rank) const;
  /// Whether no rank of `ranks` runs the transformer: a component instance
  /// on ranks of its own (a disaggregated text encoder or VAE), which
  /// serves the transformer replica of its index in the component's list.
  bool onRanksOfItsOwn(const std::vector<int64_t> &ranks) const;

private:
  std::unordered_map<int64_t, size_t> replicas;
};

/// The ranks the transformer does not use that a text_encoder or vae group
/// names (textEncoderGroups, vaeDecodeGroups), each with the replicas whose
/// prompts it encodes or whose latents it decodes. Ranks outside the world
/// are left out (world-size reports them).
std::map<int64_t, std::set<int64_t>> componentRankReplicas(const Deployment &deployment);

/// The ranks below num_gpus that run nothing: neither the transformer nor a
/// text_encoder or vae group (`components`, componentRankReplicas'). At most
/// `limit` are listed; `count` is how many there are.
std::vector<int64_t> idleRanks(const Deployment &deployment,
                               const std::map<int64_t, std::set<int64_t>> &components,
                               size_t limit, int64_t &count);

/// Parallel flags as given on the command line, before resolution.
struct ParallelFlags {
  std::optional<int64_t> numGpus, tp, ulysses, ring, kvGather, sp, cfg, pp, dp;
  std::optional<int64_t> vaeParallelSize;
  /// --text-encoder-tp-size and --text-encoder-offload.
  std::optional<int64_t> textEncoderTp;
  bool textEncoderOffload = false;
  /// --expert-offload: the transformer placement's offload.
  bool expertOffload = false;
  std::optional<std::string> ppPartition, backend, vaeRowSplit;
  std::optional<int64_t> nnodes, gpusPerNode;
  std::optional<std::string> meshOrder;
};

/// Resolves flags into a one-component (transformer) deployment: degrees
/// default to 1, --sp-degree picks kv_gather 2 or ulysses S (with a note),
/// and num_gpus defaults to the product. Throws BadInput on flags that
/// contradict each other or do not parse.
Deployment deploymentFromFlags(const ParallelFlags &flags);

/// A deployment file: the deployment and its optional workload section.
struct DeploymentFile {
  Deployment deployment;
  WorkloadOptions workload;
};

/// Reads a deployment JSON file. Throws BadInput naming the file and the
/// key path for malformed JSON, unknown keys, and values of the wrong type.
DeploymentFile parseDeploymentFile(const std::string &path);

/// The default pipeline split: blocks / pp per stage with the remainder on
/// the middle stages (30 blocks on 4 stages gives 7, 8, 8, 7).
std::vector<int64_t> defaultPipelinePartition(int64_t blocks, int64_t stages);

} // namespace ditc

#endif // DITC_ANALYSIS_DEPLOYMENT_H
