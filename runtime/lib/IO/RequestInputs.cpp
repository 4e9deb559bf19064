//===- RequestInputs.cpp - a request's tensors, read against the plan -----===//
#include "ditc/Runtime/IO/RequestInputs.h"
#include "ditc/Runtime/IO/Npy.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Utf8.h"

namespace ditc::runtime {

/// The .npy at `path`, refused unless its shape is `expected` (`meaning`
/// names the dimensions).
static NpyArray readShaped(const std::string &path, const std::vector<int64_t> &expected,
                           const char *meaning) {
  NpyArray array = readNpy(path);
  if (array.shape != expected)
    throw BadInput(escapeInvalidUtf8(path) + ": shape is " + describeShape(array.shape) +
                   " but the plan needs " + describeShape(expected) + " = " + meaning);
  return array;
}

/// A [branches, ...] array as one tensor per branch.
static std::vector<at::Tensor> perBranch(NpyArray &array) {
  at::Tensor all = at::from_blob(array.data.data(), array.shape, at::kFloat).clone();
  std::vector<at::Tensor> branches;
  for (int64_t b = 0; b < array.shape[0]; ++b)
    branches.push_back(all[b]);
  return branches;
}

std::vector<at::Tensor> readTextEmbeds(const Request &request, const Manifest &m) {
  NpyArray array = readShaped(request.textEmbeds,
                              {m.branches, m.batch, m.textTokens, m.textEmbedDim},
                              "(branches, batch, text_tokens, text_embed_dim)");
  return perBranch(array);
}

std::vector<at::Tensor> readPooledEmbeds(const Request &request, const Manifest &m) {
  if (m.pooledDim == 0)
    throw BadInput(escapeInvalidUtf8(request.pooledEmbeds) + ": " + m.modelName +
                   " takes no pooled text embeddings (its plan's pooled_dim is 0); "
                   "--pooled-embeds is for FLUX and SD3");
  NpyArray array = readShaped(request.pooledEmbeds, {m.branches, m.batch, m.pooledDim},
                              "(branches, batch, pooled_dim)");
  return perBranch(array);
}

std::vector<at::Tensor> readTextMask(const Request &request, const Manifest &m,
                                     const std::vector<Program> &programs) {
  std::string file = escapeInvalidUtf8(request.textMask);
  bool takesMask = false;
  for (const Program &p : programs)
    for (const StepInput &in : p.inputs)
      takesMask = takesMask || in.name == "text_mask";
  if (!takesMask)
    throw BadInput(file + ": " + m.modelName +
                   " takes no text mask (its plan's programs have no text_mask input); "
                   "--text-mask is for HunyuanVideo, Mochi and Qwen-Image");
  NpyArray array = readShaped(request.textMask, {m.branches, m.batch, m.textTokens},
                              "(branches, batch, text_tokens)");
  for (int64_t row = 0; row < m.branches * m.batch; ++row) {
    int64_t valid = 0;
    for (int64_t t = 0; t < m.textTokens; ++t) {
      float v = array.data[size_t(row * m.textTokens + t)];
      if (v != 0.0f && v != 1.0f)
        throw BadInput(file + ": entry [" + std::to_string(row / m.batch) + ", " +
                       std::to_string(row % m.batch) + ", " + std::to_string(t) + "] is " +
                       std::to_string(v) + "; a text mask holds 0 (padding) or 1 (valid)");
      valid += v == 1.0f;
    }
    if (valid == 0)
      throw BadInput(file + ": branch " + std::to_string(row / m.batch) + ", batch " +
                     std::to_string(row % m.batch) +
                     " has no valid token; a text mask needs at least one 1 per row");
  }
  return perBranch(array);
}

void checkGuidanceScale(const Request &request, const Manifest &m,
                               const std::vector<Program> &programs) {
  if (!request.guidanceScale || m.branches > 1)
    return;
  for (const Program &p : programs)
    for (const StepInput &in : p.inputs)
      if (in.name == "guidance")
        return;
  throw BadInput(std::string(request.fromFile() ? "guidance_scale" : "--guidance-scale") +
                 " is given, but the plan runs one branch per step and " + m.modelName +
                 " embeds no guidance; compile with --guidance-scale G > 1 for "
                 "classifier-free guidance");
}

at::Tensor readLatents(const Request &request, const Manifest &m) {
  NpyArray array = readNpy(request.latents);
  std::vector<int64_t> expected = {m.batch, m.latentChannels, m.latentFrames,
                                   m.latentHeight, m.latentWidth};
  if (array.shape != expected)
    throw BadInput(escapeInvalidUtf8(request.latents) + ": shape is " +
                   describeShape(array.shape) + " but the plan's latents are " +
                   describeShape(expected) + " = (batch, channels, frames, height, "
                                             "width), as --output writes them");
  return at::from_blob(array.data.data(), expected, at::kFloat).clone();
}

} // namespace ditc::runtime
