//===- Legality.h - sharding legality rules over a dit module ---*- C++ -*-===//
//
// Every legality rule is one function with one stable id. The rules read a
// LegalityContext (model facts from #dit.model / #dit.workload, the
// attention ops of the transformer, and the Deployment) and report
// RuleDiagnostics. The dit-check-legality pass and `ditc check` both call
// checkLegality(); neither re-implements a rule.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_ANALYSIS_LEGALITY_H
#define DITC_ANALYSIS_LEGALITY_H

#include "ditc/Analysis/Deployment.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ditc {

enum class Severity { Error, Warning, Note };
/// "error", "warning", "note".
const char *severityName(Severity severity);

struct RuleDiagnostic {
  std::string rule;
  Severity severity = Severity::Error;
  std::string message;
  std::string component;
  mlir::Operation *anchor = nullptr; // where the pass reports it
};

/// What the rules need to know about one attention op.
struct AttentionFacts {
  mlir::Operation *op = nullptr;
  int64_t numHeads = 0;
  bool shardOverSp = true;
  bool varlen = false;
  bool stackedQKV = false;
  bool pagedKVCache = false;
  std::optional<std::string> backend;
};

/// Model and workload numbers the rules need, read from the module.
struct ModelFacts {
  std::string family, className;
  int64_t blocks = 0, numHeads = 0, headDim = 0, hiddenSize = 0, ffnSize = 0;
  int64_t textHiddenSize = 0, seqAlign = 1;
  bool dualStream = false; // the text stream has its own weights
  int64_t imageTokens = 0, textTokens = 0, branches = 1;
  /// Transformers that take turns over the steps (2 for Wan 2.2 A14B).
  int64_t experts = 1;
  double guidanceScale = 1.0;
  int64_t height = 0, width = 0, frames = 1, latentFrames = 1;
  int64_t vaeSpatial = 8;
  int64_t latentHeight = 0;
  /// The class of @vae_decode's decoder ("AutoencoderKL", ...); empty when
  /// the module has none.
  std::string vaeClass;
  /// Latent rows the decoder graph's convolutions read beyond a band's edge
  /// (each convolution's kernel reach over its rows' upsampling, rounded
  /// up, the widest); unset when @vae_decode holds no graph.
  std::optional<int64_t> vaeHaloRows;
  /// The convolution that needs vaeHaloRows, for messages.
  std::string vaeHaloOp;
  std::array<int64_t, 3> patch{1, 1, 1};
  /// @text_encoder's encoders: each component's class, whether its graph
  /// is known, its heads and the widths tensor parallelism splits (the
  /// column-parallel linears' outputs: q, k, v and the feed-forward's
  /// inner width).
  struct TextEncoderFacts {
    std::string className;
    bool hasGraph = false;
    int64_t heads = 0;
    std::vector<std::pair<std::string, int64_t>> splitWidths; // (linear, width)
  };
  std::vector<TextEncoderFacts> textEncoders;
};

struct LegalityContext {
  mlir::ModuleOp module;
  ModelFacts model;
  std::vector<AttentionFacts> attentions;
  Deployment deployment;

  const Placement &transformer() const { return *deployment.find("transformer"); }
};

/// Collects diagnostics. In quiet mode (used when ranking candidate
/// configurations) rules may skip expensive message details.
class DiagnosticSink {
public:
  explicit DiagnosticSink(bool detailed = true) : detailed(detailed) {}
  void report(const char *rule, Severity severity, std::string message,
              std::string component = "transformer",
              mlir::Operation *anchor = nullptr) {
    diagnostics.push_back({rule, severity, std::move(message),
                           std::move(component), anchor});
  }
  bool wantsDetails() const { return detailed; }
  bool hasErrors() const;
  std::vector<RuleDiagnostic> diagnostics;

private:
  bool detailed;
};

struct LegalityRule {
  const char *id;
  const char *summary;
  void (*check)(const LegalityContext &, DiagnosticSink &);
  /// Depends only on the degrees (not on rank lists or nodes), so a search
  /// over candidate configurations can judge them without rank lists.
  bool degreeRule;
};
/// Every rule, in reporting order.
const std::vector<LegalityRule> &legalityRules();

/// The transformer's configuration as resolved for the report.
struct ResolvedConfig {
  int64_t numGpus = 1;
  Degrees degrees;
  std::vector<int64_t> ppPartition;
  std::string attentionBackend;
  int64_t sequenceLength = 0, textLength = 0;
};

/// The component placements a suggested configuration comes with: the
/// search's fastest choices that fit (ditc/CostModel/Search.h).
struct SuggestedComponents {
  int64_t vaeParallelSize = 1;
  int64_t textEncoderTpSize = 1;
  bool textEncoderOffload = false;
  bool expertOffload = false;
};

struct LegalityReport {
  std::vector<RuleDiagnostic> diagnostics;
  ResolvedConfig config;
  /// Filled by `ditc check` from the cost model, only when illegal.
  std::vector<Degrees> suggestions;
  /// Each suggestion's text encoder and VAE placements.
  std::vector<SuggestedComponents> suggestedComponents;
  bool legal() const;
};

/// The deployment a module carries: #dit.deployment, else #dit.mesh (one
/// transformer placement, num_gpus = the product), else all ones.
Deployment deploymentFromModule(mlir::ModuleOp module);
mlir::Attribute deploymentToAttribute(mlir::MLIRContext &context,
                                      const Deployment &deployment);

/// Reads the model facts and attention ops. Fails, with an MLIR error on the
/// module, when #dit.model or #dit.workload is missing.
mlir::FailureOr<LegalityContext> buildLegalityContext(mlir::ModuleOp module,
                                                      Deployment deployment);

/// Runs every rule and resolves the configuration for the report.
LegalityReport checkLegality(const LegalityContext &context);

/// A copy of `context` that keeps one attention op (and one signal) of each
/// kind and drops the replicas' rank lists. The rules ask only whether some
/// op of a kind exists, and rank lists are rebuilt from the degrees, so
/// judging many candidate configurations on it costs what one block does.
LegalityContext compactLegalityContext(const LegalityContext &context);

/// Calls `visit` with every way to write `numGpus` as a product of the seven
/// degrees that the single-axis bounds of the degree rules allow (tp and
/// ulysses dividing the heads, cfg the branches, pp at most the blocks, the
/// sequence split dividing the image tokens, ring and kv_gather never both
/// above 1), until `visit` returns false. The walk is capped at a fixed
/// number of steps, so no input makes it run for long; returns false when
/// the cap cut it short.
bool forEachDegreeCandidate(const LegalityContext &context, int64_t numGpus,
                            const std::function<bool(const Degrees &)> &visit);

/// The backend the transformer's attention runs with: the placement's, or
/// the default when none is given.
std::string resolvedBackend(const Placement &placement);

} // namespace ditc

#endif // DITC_ANALYSIS_LEGALITY_H
