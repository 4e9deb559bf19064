//===- Family.h - the interface every model family implements --*- C++ -*-===//
//
// One file per family under Families/ defines a FamilyDef: the family's
// published facts, the reader of its diffusers transformer config, and the
// builder of its transformer, side by side as diffusers keeps one file per
// transformer. FamilyRegistry.cpp lists them. Adding a family is a new file
// and one line there. The config-reading helpers several families share
// are declared here too (ConfigReaders.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DITC_LIB_IMPORTER_FAMILY_H
#define DITC_LIB_IMPORTER_FAMILY_H

#include "ditc/Importer/ModelSpec.h"
#include "ditc/Support/JsonFile.h"

#include "mlir/IR/Value.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace ditc {

class GraphBuilder;
struct TransformerInputs;

struct FamilyDef {
  FamilyInfo info;
  /// Reads the family's transformer config keys into `spec`; throws
  /// BadInput naming the file, key and value for anything out of range.
  void (*readConfig)(const JsonObject &config, ModelSpec &spec);
  /// Writes the transformer body and returns the predicted latents.
  mlir::Value (*buildTransformer)(GraphBuilder &g, const TransformerInputs &in);
};

/// Every family, in the order `ditc models` and the docs list them.
const std::vector<const FamilyDef *> &familyRegistry();
/// The family whose diffusers transformer class is `className`, or null.
const FamilyDef *findFamily(const std::string &className);

// The families (Families/*.cpp).
extern const FamilyDef kWanFamily, kFluxFamily, kQwenImageFamily,
    kHunyuanVideoFamily, kCogVideoXFamily, kLTXVideoFamily, kMochiFamily,
    kSD3Family;

//===----------------------------------------------------------------------===//
// Config-reading helpers shared by the families
//===----------------------------------------------------------------------===//

constexpr int64_t kMax = kAbsurdSize;

/// num_attention_heads and attention_head_dim, and the widths that follow.
void readHeads(const JsonObject &config, ModelSpec &spec);
/// in_channels, and out_channels defaulting to it as diffusers does.
void readChannels(const JsonObject &config, ModelSpec &spec);
/// Square spatial patch `patch_size` with an optional temporal one
/// (`patch_size_t`, default 1).
std::array<int64_t, 3> readPatch(const JsonObject &config, bool temporal);
/// The sinusoidal timestep features: (cos, sin) pairs, so an even count.
int64_t readFreqDim(const JsonObject &config, const std::string &field,
                    std::optional<int64_t> fallback);
/// Rotary dims per (frame, row, column) axis from `field`; diffusers
/// defaults them to (16, 56, 56) for the 128-wide heads of FLUX,
/// Qwen-Image and HunyuanVideo.
void readRopeAxes(const JsonObject &config, const std::string &field,
                  ModelSpec &spec);
/// Splits head_dim over (frames, rows, columns) the way Wan does: the two
/// spatial axes take 2 * (d / 6) each, time takes the rest.
std::vector<int64_t> wanRopeAxes(int64_t headDim);
/// LTX-Video's rope positions: one grid step per axis as a fraction of
/// diffusers' base sizes (20 frames, 2048 x 2048 pixels), through the
/// pipeline's rope_interpolation_scale (VAE temporal compression / 25 fps,
/// VAE spatial, VAE spatial) and the transformer's patch.
std::array<double, 3> ltxRopeCoordinateScale(const ModelSpec &spec);
/// Checks that the rotary axes are three and sum to the head dim.
void checkRopeAxes(const JsonObject &config, const std::string &field,
                   const ModelSpec &spec);
/// Rotary embedding turns channel pairs, so every axis has an even number
/// of channels (diffusers' get_1d_rotary_pos_embed asserts it). `field` is
/// the key that decided the axes; `derived` says they come from the head
/// dim rather than from a list in the config.
void checkRopeAxesEven(const JsonObject &config, const std::string &field,
                       const ModelSpec &spec, bool derived);
/// The string `field`, which must be one of `allowed`; null or absent gives
/// `fallback` (nullopt: the key's null). Any other value fails naming the
/// field, the value, the allowed ones and `why` (what diffusers does with
/// it, and what ditc builds).
std::optional<std::string> readChoice(const JsonObject &config,
                                      const std::string &field,
                                      const std::vector<std::string> &allowed,
                                      std::optional<std::string> fallback,
                                      const std::string &why);
/// `qk_norm`: a name diffusers' Attention does not know is refused as
/// diffusers refuses it (ValueError "unknown qk_norm"), and a known one
/// other than `built`, the norm ditc builds for `family`, is refused too.
/// Null or absent gives `fallback` (nullopt: no q/k norm).
std::optional<std::string> readQkNorm(const JsonObject &config,
                                      const std::string &built,
                                      const std::string &family,
                                      std::optional<std::string> fallback);

} // namespace ditc

#endif // DITC_LIB_IMPORTER_FAMILY_H
