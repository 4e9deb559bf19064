//===- PromptStage.h - a run's prompts to embeddings -----------*- C++ -*-===//
//
// The text stage of dit-run: the pipeline's tokenizers and encoders opened
// for the requests that bring prompts, and each request's prompts encoded
// where the plan's text_encoder section says: every rank whole without one;
// else each replica's encoding group (split over TP), whose first rank
// broadcasts the embeddings to the rest of the replica.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_RUNTIME_DRIVER_PROMPTSTAGE_H
#define DITC_RUNTIME_DRIVER_PROMPTSTAGE_H

#include "ditc/Runtime/Driver/Runner.h"
#include "ditc/Runtime/IO/Requests.h"
#include "ditc/Runtime/Plan/Manifest.h"
#include "ditc/Runtime/Text/PipelinePrompts.h"

#include <memory>
#include <string>
#include <vector>

namespace ditc::runtime {

class Communicator;

/// How a request's prompt (or negative prompt) was given, for messages: the
/// flag, or its requests line's key.
std::string promptSource(const Request &request, bool negative);

/// The text stage for `requests` that bring prompts (nullptr when none
/// does): the pipeline's tokenizers and encoders from --weights, every
/// prompt checked (UTF-8) before the rendezvous. The encoders' parameters
/// are read when `run` (the launcher's validation reads configs and
/// tokenizers only) and this rank encodes: its share under the plan's TP
/// split. Throws BadInput.
std::unique_ptr<PipelinePrompts> loadPromptStage(const RunOptions &options, const Manifest &m,
                                                 const std::vector<Request> &requests,
                                                 bool run);

/// Whether `rank` encodes its replica's prompts: the plan's encoding ranks,
/// or every rank with a transformer program when the plan places none.
bool encodesPrompts(const Manifest &m, int64_t rank);

/// One request's prompt embeddings, one per guidance branch: branch 0 the
/// prompt, the unconditional branch last the negative prompt ("" when none
/// is given, as the pipelines encode it), each for one batch item (the
/// pipelines repeat it for num_images_per_prompt). The replica's encoding
/// ranks encode; the first of them broadcasts to the replica's other ranks.
/// Throws RunFailure when the broadcast fails.
std::vector<PromptEmbeddings> encodeRequestPrompts(const Manifest &m,
                                                   const PipelinePrompts &prompts,
                                                   const Request &request,
                                                   Communicator &comm);

} // namespace ditc::runtime

#endif // DITC_RUNTIME_DRIVER_PROMPTSTAGE_H
