//===- ConfigReaders.cpp - config-reading helpers shared by the families --===//
//
// The keys several diffusers transformers share (head geometry, channels,
// patch sizes, rotary axes, timestep features), read and range-checked once.
//
//===----------------------------------------------------------------------===//
#include "Family.h"
#include "ditc/Support/Utf8.h"

#include <algorithm>

namespace ditc {

/// Reads fields common to every family and fills the spec's head geometry.
void readHeads(const JsonObject &config, ModelSpec &spec) {
  spec.numHeads = config.getInt("num_attention_heads", 1, 4096);
  spec.headDim = config.getInt("attention_head_dim", 1, 4096);
  spec.hiddenSize = spec.numHeads * spec.headDim;
  spec.textHiddenSize = spec.hiddenSize;
  spec.timeEmbedDim = spec.hiddenSize;
}

/// Splits head_dim over (frames, rows, columns) the way Wan does: the two
/// spatial axes take 2 * (d / 6) each, time takes the rest.
std::vector<int64_t> wanRopeAxes(int64_t headDim) {
  int64_t spatial = 2 * (headDim / 6);
  return {headDim - 2 * spatial, spatial, spatial};
}

static std::string listText(const std::vector<int64_t> &values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

/// Rotary embedding turns channel pairs, so every axis has an even number
/// of channels (diffusers' get_1d_rotary_pos_embed asserts it). `field` is
/// the key that decided the axes; `derived` says they come from the head
/// dim rather than from a list in the config.
void checkRopeAxesEven(const JsonObject &config, const std::string &field,
                       const ModelSpec &spec, bool derived) {
  if (std::all_of(spec.ropeAxes.begin(), spec.ropeAxes.end(),
                  [](int64_t d) { return d % 2 == 0; }))
    return;
  if (derived)
    config.fail(field, "is " + std::to_string(spec.headDim) +
                           ", which splits into rotary axes " +
                           listText(spec.ropeAxes) +
                           "; expected a head dim whose rotary axes are all "
                           "even (rotary embedding turns channel pairs)");
  config.fail(field, "is " + listText(spec.ropeAxes) +
                         ", expected even sizes (rotary embedding turns "
                         "channel pairs)");
}

void checkRopeAxes(const JsonObject &config, const std::string &field,
                   const ModelSpec &spec) {
  int64_t sum = 0;
  for (int64_t d : spec.ropeAxes)
    sum += d;
  if (spec.ropeAxes.size() != 3 || sum != spec.headDim)
    config.fail(field, "sums to " + std::to_string(sum) + " over " +
                           std::to_string(spec.ropeAxes.size()) +
                           " axes, expected 3 axes summing to "
                           "attention_head_dim " +
                           std::to_string(spec.headDim));
}

std::optional<std::string> readChoice(const JsonObject &config,
                                      const std::string &field,
                                      const std::vector<std::string> &allowed,
                                      std::optional<std::string> fallback,
                                      const std::string &why) {
  std::optional<std::string> value = config.getOptionalString(field);
  if (!value)
    return fallback;
  if (std::find(allowed.begin(), allowed.end(), *value) != allowed.end())
    return value;
  std::string names;
  for (size_t i = 0; i < allowed.size(); ++i)
    names += (i ? (i + 1 == allowed.size() ? " or '" : ", '") : "'") +
             allowed[i] + "'";
  std::string expected = allowed.empty() ? "null"
                         : fallback        ? names
                                           : "null or " + names;
  config.fail(field, "is '" + escapeInvalidUtf8(*value) + "', expected " + expected +
                         " (" + why + ")");
}

/// The q/k norm names diffusers' Attention knows (attention_processor.py).
static const std::vector<std::string> &diffusersQkNorms() {
  static const std::vector<std::string> names = {
      "layer_norm", "fp32_layer_norm", "layer_norm_across_heads",
      "rms_norm",   "rms_norm_across_heads", "l2"};
  return names;
}

std::optional<std::string> readQkNorm(const JsonObject &config,
                                      const std::string &built,
                                      const std::string &family,
                                      std::optional<std::string> fallback) {
  std::optional<std::string> value = config.getOptionalString("qk_norm");
  if (value && std::find(diffusersQkNorms().begin(), diffusersQkNorms().end(),
                         *value) == diffusersQkNorms().end())
    readChoice(config, "qk_norm", diffusersQkNorms(), fallback,
               "the names diffusers' Attention knows; it raises 'unknown "
               "qk_norm' on any other");
  return readChoice(config, "qk_norm", {built}, fallback,
                    "the q/k norm of " + family + " checkpoints, the one ditc builds");
}

/// The sinusoidal timestep features: (cos, sin) pairs, so an even count.
int64_t readFreqDim(const JsonObject &config, const std::string &field,
                    std::optional<int64_t> fallback) {
  int64_t value = fallback
                      ? config.getOptionalInt(field, 2, kMax).value_or(*fallback)
                      : config.getInt(field, 2, kMax);
  if (value % 2 != 0)
    config.fail(field, "is " + std::to_string(value) +
                           ", expected an even integer in [2, " +
                           std::to_string(kMax) +
                           "] (sinusoidal timestep features come in cos/sin "
                           "pairs)");
  return value;
}

/// in_channels, and out_channels defaulting to it as diffusers does.
void readChannels(const JsonObject &config, ModelSpec &spec) {
  spec.latentChannels = config.getInt("in_channels", 1, kMax);
  spec.outChannels = config.getOptionalInt("out_channels", 1, kMax)
                         .value_or(spec.latentChannels);
}

/// Rotary dims per (frame, row, column) axis; diffusers defaults them to
/// (16, 56, 56) for the 128-wide heads of FLUX, Qwen-Image and HunyuanVideo.
void readRopeAxes(const JsonObject &config, const std::string &field,
                  ModelSpec &spec) {
  spec.ropeAxes = config.has(field) ? config.getIntList(field, 1, 4096)
                                    : std::vector<int64_t>{16, 56, 56};
  checkRopeAxes(config, field, spec);
  checkRopeAxesEven(config, field, spec, /*derived=*/false);
}

/// Square spatial patch with an optional temporal one.
std::array<int64_t, 3> readPatch(const JsonObject &config, bool temporal) {
  int64_t p = config.getInt("patch_size", 1, 64);
  int64_t pt = temporal ? config.getOptionalInt("patch_size_t", 1, 64).value_or(1)
                        : 1;
  return {pt, p, p};
}

} // namespace ditc
