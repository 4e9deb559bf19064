//===- Requests.cpp - the requests a run serves ---------------------------===//
#include "ditc/Runtime/IO/Requests.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/ReadFile.h"
#include "ditc/Support/Utf8.h"

#include <set>

namespace ditc::runtime {

using nlohmann::json;

std::string replicaOutput(const std::string &output, int64_t index,
                          int64_t replicas) {
  if (replicas == 1)
    return output;
  // The replica's mark goes before the extension, so OUT.png stays a
  // picture and OUT.mp4 a video: OUT.dp1.png.
  std::string replicaMark = ".dp" + std::to_string(index);
  size_t slash = output.find_last_of('/');
  for (const char *extension : {".npy", ".png", ".mp4"}) {
    size_t dot = output.size() >= 4 ? output.size() - 4 : std::string::npos;
    if (dot != std::string::npos && output.compare(dot, 4, extension) == 0 &&
        (slash == std::string::npos || dot > slash + 1))
      return output.substr(0, dot) + replicaMark + extension;
  }
  return output + replicaMark + ".npy";
}

static std::vector<Request> readRequestsFile(const RequestDefaults &defaults) {
  const std::string &path = defaults.requestsFile;
  ReadFileOptions options;
  options.what = "requests file (one JSON object per line)";
  std::string text = readRegularFile(path, kMaxJsonFileBytes, options);
  std::vector<Request> requests;
  size_t lineNumber = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    ++lineNumber;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    std::string where = escapeInvalidUtf8(path) + " line " + std::to_string(lineNumber);
    if (int64_t(requests.size()) == kMaxRequests)
      throw BadInput(where + ": a requests file holds at most " +
                     std::to_string(kMaxRequests) + " requests");
    json object = JsonObject::parseText(line, where);
    if (!object.is_object())
      throw BadInput(where + ": is " + describeJson(object) +
                     ", expected a JSON object such as {\"seed\": 1, \"output\": "
                     "\"out.npy\"}");
    static const std::set<std::string> known = {
        "seed",          "text_embeds",    "latents", "output", "pooled_embeds",
        "text_mask",     "guidance_scale", "prompt", "negative_prompt"};
    for (auto it = object.begin(); it != object.end(); ++it)
      if (!known.count(it.key()))
        throw BadInput(where + ": unknown key '" + quoteBounded(it.key()) +
                       "'; allowed: guidance_scale, latents, negative_prompt, output, "
                       "pooled_embeds, prompt, seed, text_embeds, text_mask");
    JsonObject fields(where, &object);
    Request request;
    request.origin = where;
    request.line = int64_t(lineNumber);
    request.seed = fields.getOptionalInt("seed", 0, INT64_MAX).value_or(defaults.seed);
    // A path key that is present names a file: empty is refused, never
    // taken as absent (which would draw the tensor from the seed instead).
    auto path = [&](const char *key, const std::string &fallback,
                    const char *absent = "to draw it from the seed") {
      std::optional<std::string> value = fields.getOptionalString(key);
      if (value && value->empty())
        fields.fail(key, std::string("is empty; expected a .npy path (leave the key out ") +
                             absent + ")");
      return value.value_or(fallback);
    };
    request.textEmbeds = path("text_embeds", defaults.textEmbeds);
    request.latents = path("latents", defaults.latents);
    request.pooledEmbeds = path("pooled_embeds", defaults.pooledEmbeds);
    request.textMask = path("text_mask", defaults.textMask, "for every token valid");
    // A prompt may be empty (the pipelines encode "" as any other prompt).
    request.prompt = defaults.prompt;
    request.negativePrompt = defaults.negativePrompt;
    if (fields.has("prompt"))
      request.prompt = fields.getString("prompt");
    if (fields.has("negative_prompt"))
      request.negativePrompt = fields.getString("negative_prompt");
    bool lineEmbeds = fields.has("text_embeds") || fields.has("pooled_embeds") ||
                      fields.has("text_mask");
    if (fields.has("prompt") && lineEmbeds)
      fields.fail(fields.has("text_embeds")     ? "text_embeds"
                  : fields.has("pooled_embeds") ? "pooled_embeds"
                                                : "text_mask",
                  "is given with a prompt; a request takes a prompt or embeddings, "
                  "not both");
    if (lineEmbeds && !fields.has("prompt")) {
      // The line's embeddings replace a --prompt default.
      request.prompt.reset();
      request.negativePrompt.reset();
    }
    if (fields.has("negative_prompt") && !request.prompt)
      fields.fail("negative_prompt", "is given without a prompt");
    if (request.prompt) {
      request.textEmbeds.clear();
      request.pooledEmbeds.clear();
      request.textMask.clear();
    }
    request.guidanceScale = defaults.guidanceScale;
    if (fields.has("guidance_scale"))
      request.guidanceScale = fields.getOptionalDouble(
          "guidance_scale", 0.0, -kMaxGuidanceScale, kMaxGuidanceScale);
    request.output = fields.getString("output");
    if (request.output.empty())
      fields.fail("output", "is empty; expected the .npy path this request writes");
    requests.push_back(request);
  }
  if (requests.empty())
    throw BadInput(escapeInvalidUtf8(path) + ": holds no requests; expected one "
                                             "JSON object per line");
  return requests;
}

std::vector<Request> buildRequests(const RequestDefaults &defaults,
                                   int64_t replicas) {
  if (!defaults.requestsFile.empty())
    return readRequestsFile(defaults);
  std::vector<Request> requests;
  for (int64_t i = 0; i < replicas; ++i) {
    Request request;
    request.origin = "the command line";
    // Replica i serves seed + i; saturate rather than overflow.
    request.seed = defaults.seed > INT64_MAX - i ? INT64_MAX : defaults.seed + i;
    request.textEmbeds = defaults.textEmbeds;
    request.latents = defaults.latents;
    request.pooledEmbeds = defaults.pooledEmbeds;
    request.textMask = defaults.textMask;
    request.prompt = defaults.prompt;
    request.negativePrompt = defaults.negativePrompt;
    request.guidanceScale = defaults.guidanceScale;
    request.output = replicaOutput(defaults.output, i, replicas);
    requests.push_back(request);
  }
  return requests;
}

} // namespace ditc::runtime
