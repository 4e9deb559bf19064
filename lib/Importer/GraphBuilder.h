//===- GraphBuilder.h - sub-layers shared by the family builders -*- C++ -*-===//
//
// The family files (Families/*.cpp) write their transformers out of these
// sub-layers (linear, norms, adaLN, attention, MLP) and of the blocks that
// several families share (the Wan-style block, the MMDiT dual- and
// single-stream blocks, the final norm and unpatchify). Every op carries a
// NameLoc naming the diffusers module it comes from (`blocks.3.attn1`,
// `blocks.3.ffn.net.0.proj`, `proj_out`), so a verifier error points at the
// module.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_LIB_IMPORTER_GRAPHBUILDER_H
#define DITC_LIB_IMPORTER_GRAPHBUILDER_H

#include "ditc/Importer/ModelSpec.h"

#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>
#include <string>
#include <utility>

namespace ditc {

/// Where adaLN chunks sit for one modulated sub-layer.
struct Chunks {
  std::optional<int64_t> shift;
  int64_t scale;
  std::optional<int64_t> gate;
};

/// The arguments of a transformer function: latents, timesteps, the text
/// sequence, and the pooled text and guidance scale of the families that
/// take them (null otherwise).
struct TransformerInputs {
  mlir::Value latents, timestep, text, pooled, textMask, guidance;
};

/// How a Wan-style block (Wan, LTX-Video) normalizes.
struct WanStyle {
  /// Wan: LayerNorm (`norm1`, `norm3`) before the modulations and, with
  /// cross_attn_norm, an affine `norm2` before cross-attention. LTX-Video:
  /// RMSNorm (`norm1`, `norm2`), and no norm before cross-attention.
  bool layerNorm;
  /// The MLP's module under the block (`ffn` for Wan, `ff` for LTX-Video).
  const char *ffn;
};

/// Module names and variants of a dual-stream MMDiT block.
struct DualStreamStyle {
  /// The two streams' adaLN projections and MLPs, under the block.
  const char *imgMod = "norm1.linear", *txtMod = "norm1_context.linear";
  const char *imgMlp = "ff", *txtMlp = "ff_context";
  /// SD3's last block only feeds text into attention.
  bool lastBlockContextPreOnly = false;
};

/// Builds one transformer function. Every op created between enterBlock and
/// leaveBlock carries the dit.block index, so pipeline parallelism can cut
/// between any two blocks.
class GraphBuilder {
public:
  GraphBuilder(mlir::OpBuilder &b, const ModelSpec &spec, const Workload &w,
               mlir::Type elementType);

  /// While alive, the ops the builder creates carry NameLoc(`path`), the
  /// diffusers module they belong to; the previous location comes back after.
  class ModuleScope {
  public:
    ModuleScope(GraphBuilder &g, const std::string &path);
    ~ModuleScope() { g.loc = saved; }
    ModuleScope(const ModuleScope &) = delete;
    ModuleScope &operator=(const ModuleScope &) = delete;

  private:
    GraphBuilder &g;
    mlir::Location saved;
  };

  /// Fills `fn` (whose entry block has the transformer's arguments) with
  /// the family's transformer and its return.
  void buildTransformer(mlir::func::FuncOp fn);

  mlir::RankedTensorType tensor(llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, elt);
  }
  mlir::RankedTensorType latentType(int64_t channels);

  /// Ops from here on belong to transformer block `index` (counted over
  /// every kind of block), until leaveBlock.
  void enterBlock(int64_t index) { block = index; }
  void leaveBlock() { block.reset(); }

  //===--------------------------------------------------------------------===//
  // Sub-layers
  //===--------------------------------------------------------------------===//

  /// The patch embedding, projected by a diffusers `kernel` module, on
  /// patch tokens whose features run in `features` order; the epilogue's
  /// unpatchify reads the same order (DitOps.td, dit.patch_embed). With
  /// `posTable` (SD3), plus the rows of that cropped position table
  /// (spec.posEmbedMaxSize).
  mlir::Value patchEmbed(mlir::Value latents, const std::string &weight,
                         mlir::dit::PatchKernel kernel,
                         mlir::dit::FeatureOrder features,
                         const std::string &posTable = "");
  /// Sinusoidal features of `scale` x t, then the MLP `weight`.
  mlir::Value timestepEmbedding(mlir::Value t, int64_t out,
                                const std::string &weight, double scale = 1.0);
  mlir::Value linear(mlir::Value x, int64_t out, const std::string &weight,
                     bool bias = true);
  /// A norm is affine exactly when it names a weight. Its epsilon is the
  /// spec's unless `eps` is given (CogVideoX's q/k norms use 1e-6 beside a
  /// 1e-5 `norm_eps`).
  mlir::Value layerNorm(mlir::Value x, const std::string &weight = "",
                        std::optional<int64_t> group = std::nullopt,
                        std::optional<double> eps = std::nullopt);
  mlir::Value rmsNorm(mlir::Value x, const std::string &weight = "",
                      std::optional<int64_t> group = std::nullopt,
                      std::optional<double> eps = std::nullopt);
  /// q/k normalization: per head (FLUX-style) or across heads (Wan, LTX),
  /// as the spec says; the identity when the model has none.
  mlir::Value qkNorm(mlir::Value x, const std::string &weight);
  mlir::Value adaln(mlir::Value condition, int64_t chunks, int64_t outWidth,
                    const std::string &weight, bool table = false);
  mlir::Value modulate(mlir::Value x, mlir::Value params, const Chunks &c);
  /// x + branch, or x + gate * branch with chunk `gate` of `params`
  /// (its tanh with `tanhGate`, Mochi).
  mlir::Value residual(mlir::Value x, mlir::Value branch,
                       mlir::Value params = {},
                       std::optional<int64_t> gate = std::nullopt,
                       bool tanhGate = false);
  /// The mean over the tokens of a replicated sequence: [B, L, E] -> [B, E].
  /// The mean of x's token rows; with `mask` [B, L], of its valid rows.
  mlir::Value tokenMean(mlir::Value x, mlir::Value mask = {});
  /// diffusers' MochiAttentionPool `weight` over a replicated sequence.
  mlir::Value attentionPool(mlir::Value x, int64_t heads, int64_t out,
                            const std::string &weight, mlir::Value mask = {});
  /// Adds diffusers' fixed 3-D sin/cos position embedding to the image
  /// tokens `x` (CogVideoX-2b).
  mlir::Value sincosPosEmbed(mlir::Value x, double spatialScale,
                             double temporalScale);
  mlir::Value rope(mlir::Value x, int64_t textTokens = 0,
                   mlir::dit::TextPosition position =
                       mlir::dit::TextPosition::Prefix);
  /// A joint or varlen attention takes `textMask`, when set, as its key mask.
  mlir::Value attention(mlir::dit::AttentionKind kind, mlir::Value q,
                        mlir::Value k, mlir::Value v, int64_t textTokens = 0,
                        mlir::dit::TextPosition position =
                            mlir::dit::TextPosition::Prefix,
                        bool varlen = false);
  mlir::Value activation(mlir::dit::ActivationKind kind, mlir::Value x);
  /// Feed-forward under module `prefix`: up projection `up`, activation,
  /// down projection `down` back to the input width. Gated activations
  /// take a doubled up projection.
  mlir::Value mlp(mlir::Value x, int64_t inner, mlir::dit::ActivationKind kind,
                  const std::string &prefix, const std::string &up,
                  const std::string &down, bool bias = true);
  mlir::Value concat(mlir::Value text, mlir::Value image,
                     mlir::dit::TextPosition position);
  std::pair<mlir::Value, mlir::Value>
  split(mlir::Value joint, int64_t textTokens,
        mlir::dit::TextPosition position);
  /// Channel-wise concatenation of two token tensors of equal length.
  mlir::Value concatFeatures(mlir::Value a, mlir::Value b);
  /// `<prefix>.linear_1`, an activation, `<prefix>.linear_2`: the pooled-
  /// text projection of FLUX, HunyuanVideo and SD3 (SiLU) and the text
  /// projection of Wan and LTX-Video (tanh GELU).
  mlir::Value twoLayerProjection(mlir::Value x, int64_t out,
                                 const std::string &prefix,
                                 mlir::dit::ActivationKind kind);

  //===--------------------------------------------------------------------===//
  // Embeddings and blocks shared by several families
  //===--------------------------------------------------------------------===//

  /// diffusers' CombinedTimestep(Guidance)TextProjEmbeddings (FLUX,
  /// HunyuanVideo, SD3): timestep, the guidance scale when embedded, and
  /// the pooled text, summed. The guidance embedding is of
  /// `guidanceScale` x the guidance input (FLUX's transformer multiplies it
  /// by 1000).
  mlir::Value combinedTimestepTextEmbedding(const TransformerInputs &in,
                                            double guidanceScale = 1.0);

  /// Self-attention over one stream with separate q/k/v, module `p`.
  mlir::Value selfAttention(mlir::Value x, const std::string &p);
  /// Cross-attention of image tokens against the replicated text.
  mlir::Value crossAttention(mlir::Value x, mlir::Value text,
                             const std::string &p);

  /// Wan and LTX block `p`: modulated self-attention, cross-attention to
  /// the text, modulated MLP, all on the image stream. `timeProjection` is
  /// the [B, 6 * D] projection all blocks share; each block adds its own
  /// learned table to it.
  mlir::Value wanStyleBlock(mlir::Value x, mlir::Value timeProjection,
                            mlir::Value text, const std::string &p,
                            const WanStyle &style);

  /// Dual-stream MMDiT block `transformer_blocks.<i>` (FLUX, Qwen-Image,
  /// HunyuanVideo, SD3): each stream is modulated and projected with
  /// its own weights, the two attend jointly, and each gets its own MLP.
  std::pair<mlir::Value, mlir::Value>
  dualStreamBlock(mlir::Value img, mlir::Value txt, mlir::Value temb,
                  int64_t i, mlir::dit::TextPosition position, bool varlen,
                  const DualStreamStyle &style);

  /// Single-stream block `single_transformer_blocks.<i>` (FLUX,
  /// HunyuanVideo): one joint sequence, attention and MLP run in parallel
  /// from one modulated input and share proj_out.
  mlir::Value singleStreamBlock(mlir::Value x, mlir::Value temb, int64_t i,
                                mlir::dit::TextPosition position, bool varlen);

  /// The MMDiT stack: every dual-stream block, then (when the model has
  /// them) the single-stream blocks over the joined sequence. Returns the
  /// image stream.
  mlir::Value mmditBlocks(mlir::Value img, mlir::Value txt, mlir::Value temb,
                          mlir::dit::TextPosition position, bool varlen,
                          const DualStreamStyle &style);

  /// Final norm `norm_out` (eps: the spec's outNormEps, else its eps)
  /// modulated by `modName`, projection `proj_out` to patches, and
  /// unpatchify. The norm is affine when `normWeight` names its weight
  /// (CogVideoX's `norm_out.norm`).
  mlir::Value epilogue(mlir::Value x, mlir::Value temb,
                       const std::string &modName, Chunks chunks,
                       bool table = false, const std::string &normWeight = "");

  static int64_t width(mlir::Value v) {
    return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape().back();
  }
  static int64_t tokens(mlir::Value v) {
    return llvm::cast<mlir::RankedTensorType>(v.getType()).getDimSize(1);
  }

  mlir::OpBuilder &b;
  const ModelSpec &spec;
  const Workload &w;
  /// Model width, text tokens, image tokens, batch.
  const int64_t D, L, S, B;
  /// Where rope places the grid: position = offset + step * index per axis
  /// (unset: the index itself). A family sets them before its blocks.
  std::optional<std::array<double, 3>> ropeGridOffset, ropeGridStep;
  /// Learned per-head rope frequencies (Mochi's `pos_frequencies`), when set.
  std::string ropeWeight;
  /// The transformer's text mask (`text_mask`, [B, L]) when the family takes
  /// one: every joint attention, and every varlen one (HunyuanVideo's
  /// refiner over the text alone), then attends only the valid text keys.
  mlir::Value textMask;

private:
  template <typename OpTy, typename... Args>
  OpTy make(Args &&...args) {
    auto op = OpTy::create(b, loc, std::forward<Args>(args)...);
    if (block)
      op->setAttr(mlir::dit::DitDialect::kBlockAttrName,
                  b.getI64IntegerAttr(*block));
    return op;
  }
  template <typename NormOp>
  mlir::Value norm(mlir::Value x, const std::string &weight,
                   std::optional<int64_t> group, std::optional<double> eps);

  mlir::Location loc;
  mlir::Type elt;
  std::optional<int64_t> block;
  mlir::dit::FeatureOrder tokenFeatures = mlir::dit::FeatureOrder::ChannelsLast;
};

} // namespace ditc

#endif // DITC_LIB_IMPORTER_GRAPHBUILDER_H
