//===- PromptStage.cpp - a run's prompts to embeddings --------------------===//
#include "ditc/Runtime/Driver/PromptStage.h"
#include "ditc/Runtime/Comm/Communicator.h"
#include "ditc/Runtime/Comm/ProcessGroups.h"
#include "ditc/Runtime/Text/Tokenizers.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Utf8.h"

#include <algorithm>

namespace ditc::runtime {

std::string promptSource(const Request &request, bool negative) {
  if (request.fromFile())
    return request.origin + ": " + (negative ? "negative_prompt" : "prompt");
  return negative ? "--negative-prompt" : "--prompt";
}

std::unique_ptr<PipelinePrompts> loadPromptStage(const RunOptions &options, const Manifest &m,
                                                 const std::vector<Request> &requests,
                                                 bool run) {
  auto first = std::find_if(requests.begin(), requests.end(),
                            [](const Request &r) { return r.prompt.has_value(); });
  if (first == requests.end())
    return nullptr;
  // Named as the user gave it: the flag, or the first requests line.
  std::string flag = first->fromFile() && !options.prompt ? first->origin + ": prompt"
                                                          : "--prompt";
  std::string reason = promptUnsupportedReason(m);
  if (!reason.empty())
    throw BadInput(flag + ": " + reason);
  if (options.weights.empty())
    throw BadInput(flag + " needs --weights SNAPSHOT: a pipeline folder whose "
                   "model_index.json names the tokenizers and text encoders");
  if (!options.saveTextEmbeds.empty() && requests.size() > 1)
    throw BadInput("--save-text-embeds writes one request's embeddings; this run serves " +
                   std::to_string(requests.size()) + " requests");
  for (const Request &request : requests) {
    if (request.prompt)
      requireUtf8(*request.prompt, promptSource(request, false));
    if (request.negativePrompt)
      requireUtf8(*request.negativePrompt, promptSource(request, true));
  }
  // The plan's text_encoder section: this rank's replica's encoding ranks
  // read the encoders (split over them under TP); the replica's other ranks
  // (and a rank without a program) check the files only.
  std::vector<int64_t> encoders =
      m.textEncoders(m.ranks[size_t(options.rank)].coords.at("dp"));
  EncoderShard shard;
  bool encodes = encodesPrompts(m, options.rank);
  if (encodes && !encoders.empty()) {
    shard.size = int64_t(encoders.size());
    shard.index = std::find(encoders.begin(), encoders.end(), options.rank) - encoders.begin();
  }
  return std::make_unique<PipelinePrompts>(options.weights, m, run && encodes, shard);
}

bool encodesPrompts(const Manifest &m, int64_t rank) {
  std::vector<int64_t> encoders = m.textEncoders(m.ranks[size_t(rank)].coords.at("dp"));
  if (encoders.empty())
    return bool(m.ranks[size_t(rank)].program);
  return std::count(encoders.begin(), encoders.end(), rank) > 0;
}

std::vector<PromptEmbeddings> encodeRequestPrompts(const Manifest &m,
                                                   const PipelinePrompts &prompts,
                                                   const Request &request,
                                                   Communicator &comm) {
  int64_t rank = comm.rank();
  std::vector<PromptEmbeddings> out;
  bool encodes = encodesPrompts(m, rank);
  for (int64_t b = 0; b < m.branches; ++b) {
    bool negative = b > 0;
    std::string prompt = negative ? request.negativePrompt.value_or("") : *request.prompt;
    PromptEmbeddings encoded;
    if (encodes) {
      encoded = prompts.encode({prompt}, promptSource(request, negative));
    } else {
      encoded.text = at::empty({1, m.textTokens, m.textEmbedDim});
      if (m.pooledDim > 0)
        encoded.pooled = at::empty({1, m.pooledDim});
    }
    if (Group *replica = comm.textReplicaGroup()) {
      std::vector<int64_t> encoders = m.textEncoders(m.ranks[size_t(rank)].coords.at("dp"));
      int64_t root = std::find(replica->members.begin(), replica->members.end(),
                               encoders.front()) -
                     replica->members.begin();
      for (at::Tensor *x : {&encoded.text, &encoded.pooled}) {
        if (!x->defined())
          continue;
        at::Tensor buffer = x->contiguous().to(comm.device());
        try {
          replica->broadcast(buffer, root);
        } catch (const std::exception &error) {
          throw RunFailure("rank " + std::to_string(rank) +
                           ": broadcasting the prompt embeddings from rank " +
                           std::to_string(encoders.front()) + " over " + replica->key +
                           " (ranks " + rankList(replica->members) +
                           ") failed: " + firstLine(error));
        }
        *x = buffer.cpu();
      }
    }
    out.push_back(std::move(encoded));
  }
  return out;
}

} // namespace ditc::runtime
