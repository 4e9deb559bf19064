//===- RequestInputs.cpp - a request's tensors, read against the plan -----===//
#include "ditc/Runtime/IO/RequestInputs.h"
#include "ditc/Runtime/IO/Npy.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Utf8.h"

namespace ditc::runtime {

std::vector<at::Tensor> readTextEmbeds(const Request &request,
                                              const Manifest &m) {
  NpyArray array = readNpy(request.textEmbeds);
  std::vector<int64_t> expected = {m.branches, m.batch, m.textTokens, m.textEmbedDim};
  if (array.shape != expected)
    throw BadInput(escapeInvalidUtf8(request.textEmbeds) + ": shape is " +
                   describeShape(array.shape) + " but the plan needs " +
                   describeShape(expected) +
                   " = (branches, batch, text_tokens, text_embed_dim)");
  at::Tensor all = at::from_blob(array.data.data(), expected, at::kFloat).clone();
  std::vector<at::Tensor> texts;
  for (int64_t b = 0; b < m.branches; ++b)
    texts.push_back(all[b]);
  return texts;
}

std::vector<at::Tensor> readPooledEmbeds(const Request &request,
                                                const Manifest &m) {
  if (m.pooledDim == 0)
    throw BadInput(escapeInvalidUtf8(request.pooledEmbeds) + ": " + m.modelName +
                   " takes no pooled text embeddings (its plan's pooled_dim is 0); "
                   "--pooled-embeds is for FLUX and SD3");
  NpyArray array = readNpy(request.pooledEmbeds);
  std::vector<int64_t> expected = {m.branches, m.batch, m.pooledDim};
  if (array.shape != expected)
    throw BadInput(escapeInvalidUtf8(request.pooledEmbeds) + ": shape is " +
                   describeShape(array.shape) + " but the plan needs " +
                   describeShape(expected) + " = (branches, batch, pooled_dim)");
  at::Tensor all = at::from_blob(array.data.data(), expected, at::kFloat).clone();
  std::vector<at::Tensor> pooled;
  for (int64_t b = 0; b < m.branches; ++b)
    pooled.push_back(all[b]);
  return pooled;
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
