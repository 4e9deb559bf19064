//===- HardwareProfile.h - the numbers the cost model prices with -*- C++ -*-===//
//
// A hardware profile is one GPU type in one kind of node: peak FLOP/s,
// memory, the link inside a node and the NIC between nodes, and the fraction
// of each peak that real kernels and collectives reach. The bundled
// profiles live in models/hardware/profiles.json, where every number carries
// its source; users pass their own file with --hardware. No MLIR here, so
// `ditc calibrate` (which links the runtime) can write one.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_COSTMODEL_HARDWAREPROFILE_H
#define DITC_COSTMODEL_HARDWAREPROFILE_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ditc {

/// The collective algorithms the model prices.
enum class CollectiveKind { AllReduce, AllGather, AllToAll, SendRecv, RingShift };
/// "all_reduce", "all_gather", "all_to_all", "send_recv", "ring_shift".
const char *collectiveKindName(CollectiveKind kind);

/// One link class: bandwidth per GPU per direction (bytes/s) and the latency
/// of one step of a collective algorithm (seconds).
struct LinkClass {
  double bandwidth = 0, latency = 0;
};

/// A CPU host where dit-run's ranks share the cores (the optional "host"
/// section, which `ditc calibrate` writes from measurements). dit-run gives
/// each of R ranks on a host of C cores max(1, C / R) intra-op threads, so
/// what one rank achieves depends on how many ranks share the host.
struct HostRates {
  int64_t cores = 0;
  /// Achieved FLOP/s (GEMM, attention) and bytes/s (elementwise) of one
  /// rank by its thread count.
  std::map<int64_t, double> gemmFlops, attentionFlops, elementwiseBandwidth;
  /// Output elements per second of the element-wise ops (norms, GELU,
  /// rotary embedding, residual adds) by thread count; the model counts one
  /// FLOP per output element of such an op. Optional: without it they are
  /// priced by their bytes alone.
  std::map<int64_t, double> elementwiseFlops;
  /// Per collective kind, the latency and bandwidth fitted to the kind's
  /// own alpha-beta formula between ranks of this host; they replace the
  /// intra-node link (at efficiency 1) for that kind.
  std::map<CollectiveKind, LinkClass> collectives;
  /// What a blocking collective waits for the group's last member, by the
  /// ranks busy on the host (the largest measured count at or below it
  /// applies; none below 2). Ranks that share cores, or vCPUs of different
  /// speed, finish the same work at different times: a collective after
  /// `c` seconds of compute waits perSync + fraction * c more than between
  /// idle ranks. Optional: without it the model adds no wait.
  struct Skew {
    double perSync = 0, fraction = 0;
  };
  std::map<int64_t, Skew> skew;
};

struct HardwareProfile {
  std::string name, description, file;
  int64_t gpusPerNode = 8;
  double peakFlopsBf16 = 0, peakFlopsFp32 = 0;
  double memoryBytes = 0, memoryBandwidth = 0;
  LinkClass intraNode, interNode;
  /// Achievable fraction of peak, in (0, 1].
  double gemmEfficiency = 1, attentionEfficiency = 1, elementwiseEfficiency = 1;
  std::map<CollectiveKind, double> collectiveEfficiency;
  /// Fraction of one hop's attention time that can hide that hop's ring
  /// transfer, in [0, 1] (1 when the engine overlaps them, 0 when not).
  double ringOverlap = 0;
  /// Keys per call at which the attention kernel reaches half its
  /// long-sequence efficiency: a call over k keys runs at
  /// attentionEfficiency * k / (k + attentionHalfKeys), since each query
  /// tile pays a fixed prologue and epilogue (load Q, write O and the
  /// softmax statistics) around its loop over the keys. 0: no such cost.
  double attentionHalfKeys = 0;
  /// Bytes of memory traffic per output element of one ring-attention
  /// online-softmax merge (the running float32 output and the block's
  /// output read, the running output written).
  double ringMergeBytes = 12;
  /// Seconds per ring hop that nothing hides: the hop's kernel launches and
  /// the wait for its transfer before the next block is attended.
  double ringHopOverhead = 0;
  /// Seconds per op an eager engine launches that the GPU does not overlap
  /// (the host's dispatch and launch of the op's kernels); the model counts
  /// one launch per op of the rank's program (ComputeWork::launches). 0
  /// prices a compiled engine (CUDA graphs, torch.compile), whose launches
  /// the GPU does not wait for.
  double kernelLaunch = 0;
  /// Host seconds per denoising step outside the transformer: the
  /// pipeline's loop (the scheduler step, the guidance combine, the
  /// timestep and the callbacks), which no axis splits.
  double stepHostOverhead = 0;
  /// Bytes/s one GPU reads from host memory (its PCIe link, per direction):
  /// what an expert swap under --expert-offload moves at. 0: unknown, and
  /// the search keeps both experts resident.
  double hostToDeviceBandwidth = 0;
  /// Present for a CPU host profile; then compute is priced from it.
  std::optional<HostRates> host;

  double peakFlops(bool bf16) const { return bf16 ? peakFlopsBf16 : peakFlopsFp32; }
};

/// The bundled profiles file (beside the bundled models).
std::string bundledHardwareFile();
/// Names of the profiles in the bundled file, in file order.
std::vector<std::string> bundledHardwareNames();

/// `nameOrFile` is a bundled profile name (case-insensitive) or a path to a
/// profiles file (the bundled format: {"profiles": {NAME: {...}}}, whose
/// only profile is taken, or which must hold `profileName`). Throws BadInput
/// naming the file, the field and the value for a malformed or incomplete
/// profile, a non-positive bandwidth, an efficiency outside (0, 1], or an
/// unknown name (listing the known ones).
HardwareProfile loadHardwareProfile(const std::string &nameOrFile);

/// Parses every profile of a profiles document read from `file`.
std::vector<HardwareProfile> parseHardwareProfiles(const std::string &text,
                                                   const std::string &file);

/// The profile as a profiles document ({"format", "profiles": {name: ...}})
/// with `source` on every number; `ditc calibrate` writes this. `sources`
/// maps a field's path ("gemm", "host.threads.2.gemm_flops",
/// "host.collectives.all_reduce.latency") to its source.
std::string hardwareProfileToJson(const HardwareProfile &profile,
                                  const std::map<std::string, std::string> &sources);

} // namespace ditc

#endif // DITC_COSTMODEL_HARDWAREPROFILE_H
