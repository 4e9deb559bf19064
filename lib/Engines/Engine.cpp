//===- Engine.cpp - the engines ditc speaks, and what they share ----------===//
#include "ditc/Engines/Engine.h"
#include "Engines.h"
#include "ditc/Analysis/MeshLayout.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace ditc::engines {

const EngineRule &Engine::rule(const std::string &id) const {
  for (const EngineRule &rule : rules())
    if (rule.id == id)
      return rule;
  throw std::logic_error(name() + " has no rule '" + id + "'");
}

const std::vector<const Engine *> &knownEngines() {
  static const std::vector<const Engine *> engines = {&sglangEngine(), &vllmOmniEngine(), &xditEngine(),
                                                      &diffusersEngine()};
  return engines;
}

const Engine &findEngine(const std::string &where, const std::string &name) {
  std::string known;
  for (const Engine *engine : knownEngines()) {
    if (engine->name() == name)
      return *engine;
    known += (known.empty() ? "" : ", ") + engine->name();
  }
  badFlag(where, name,
          where + " '" + name + "' is not an engine ditc knows; known engines: " + known);
}

std::string shellLine(const std::vector<std::string> &words) {
  std::string out;
  for (const std::string &word : words) {
    bool plain = !word.empty() &&
                 std::all_of(word.begin(), word.end(), [](unsigned char c) {
                   return std::isalnum(c) || std::string("_./=:,@%+-").find(char(c)) !=
                                                 std::string::npos;
                 });
    std::string quoted = "'";
    for (char c : word)
      quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted += "'";
    out += (out.empty() ? "" : " ") + (plain ? word : quoted);
  }
  return out;
}

std::string describeOrder(const std::vector<Axis> &order) {
  std::string out;
  for (Axis axis : order)
    out += (out.empty() ? "" : ", ") + std::string(axisName(axis));
  return out;
}

/// Why `target` cannot run on `engine`'s rank layout, or nothing: its mesh
/// order differs from engine.rankOrder() on the transformer's axes of
/// degree above 1 (so the engine's groups would join other ranks than the
/// plan's), or a deployment file lists replica ranks other than the
/// contiguous blocks the engine forms. Reported under engine.rankOrderRule().
static std::optional<EngineFinding> rankOrderFinding(const Engine &engine,
                                                     const EngineTarget &target) {
  const Placement &transformer = *target.deployment.find("transformer");
  const Degrees &d = transformer.degrees;
  const std::vector<Axis> engineOrder = engine.rankOrder();
  // Axes of degree 1 hold no ranks, so only the split axes' order matters.
  auto splitAxes = [&](const std::vector<Axis> &order) {
    std::vector<Axis> split;
    for (Axis axis : order)
      if (d[axis] > 1)
        split.push_back(axis);
    return split;
  };
  std::vector<Axis> planned = splitAxes(target.deployment.meshOrder.empty()
                                            ? MeshLayout::defaultOrder()
                                            : target.deployment.meshOrder);
  std::vector<Axis> engines = splitAxes(engineOrder);
  if (planned != engines)
    return EngineFinding{engine.rankOrderRule(),
                         "the configuration lays its ranks out as " + describeOrder(planned) +
                             " (outermost first); " + engine.title() + " lays them out as " +
                             describeOrder(engines) +
                             ", so its groups would join other ranks than the plan's"};
  if (!transformer.explicitInstances)
    return std::nullopt;
  std::vector<std::vector<int64_t>> contiguous = defaultInstances(d, engineOrder);
  for (size_t replica = 0; replica < transformer.instances.size(); ++replica)
    if (replica >= contiguous.size() || transformer.instances[replica] != contiguous[replica])
      return EngineFinding{
          engine.rankOrderRule(),
          "the deployment runs transformer replica " + std::to_string(replica) + " on ranks " +
              rankList(transformer.instances[replica]) + "; " + engine.title() +
              " runs it on ranks " +
              (replica < contiguous.size() ? rankList(contiguous[replica]) : "[]") +
              " and takes no rank lists"};
  return std::nullopt;
}

std::string multiNodeNote(int64_t nodes, const std::string &rankFlag) {
  return "run the line on each of the " + std::to_string(nodes) + " nodes with " + rankFlag +
         " 0 to " + std::to_string(nodes - 1) + " (0 as written); " + kFirstNodeAddress +
         " stands for node 0's address";
}

/// What an emitted line leaves to the engine: ditc's text-encoder TP and
/// VAE decode split, which no engine flag ditc writes carries (ditc maps
/// only the transformer's degrees). Nothing when the deployment splits
/// neither.
static std::optional<std::string> componentsNote(const Engine &engine,
                                                  const Deployment &deployment) {
  std::string split;
  if (const Placement *encoder = deployment.find("text_encoder");
      encoder && encoder->degrees[Axis::TP] > 1)
    split = "the text encoder over tp " + std::to_string(encoder->degrees[Axis::TP]);
  if (const Placement *vae = deployment.find("vae"); vae && vae->vaeParallelSize > 1)
    split += (split.empty() ? "" : " and ") + std::string("the VAE decode over ") +
             std::to_string(vae->vaeParallelSize) + " ranks";
  if (split.empty())
    return std::nullopt;
  return "ditc's plan runs " + split + "; the line leaves both to " + engine.title() +
         "'s own defaults (ditc writes only the transformer's degrees)";
}

EmittedLaunch Engine::emit(const EngineTarget &given,
                           std::vector<EngineFinding> &refusals) const {
  EngineTarget target = emittedTarget(given);
  refusals = check(target);
  if (std::optional<EngineFinding> order = rankOrderFinding(*this, target))
    refusals.push_back(*order);
  EmittedLaunch launch = launchLine(target, refusals);
  if (!refusals.empty())
    return {};
  if (std::optional<std::string> note = componentsNote(*this, target.deployment))
    launch.notes.push_back(*note);
  return launch;
}

std::string familyOf(const ModelSpec &spec) { return spec.family.name; }

std::string modelWord(const ModelSpec &spec) {
  if (std::optional<BundledModel> bundled = findBundledModel(spec.name)) {
    std::vector<std::string> ids = bundledRepoIds(*bundled);
    if (!ids.empty())
      return ids.front();
  }
  return spec.name;
}

void appendWorkload(std::vector<std::string> &argv, const EngineTarget &target,
                    char separator) {
  auto flag = [&](std::string name) {
    std::replace(name.begin(), name.end(), '-', separator);
    return "--" + name;
  };
  const Workload &w = target.workload;
  argv.insert(argv.end(), {flag("height"), std::to_string(w.height), flag("width"),
                           std::to_string(w.width)});
  if (target.spec.family.video)
    argv.insert(argv.end(), {flag("num-frames"), std::to_string(w.frames)});
  argv.insert(argv.end(), {flag("num-inference-steps"), std::to_string(w.steps),
                           flag("guidance-scale"), formatScale(w.guidanceScale)});
}

std::optional<int64_t> jsonInteger(const nlohmann::json *value, const std::string &name,
                                   int64_t min, int64_t max, const std::string &expected) {
  if (!value || value->is_null())
    return std::nullopt;
  bool inRange = value->is_number_integer() &&
                 !(value->is_number_unsigned() && value->get<uint64_t>() > uint64_t(max)) &&
                 value->get<int64_t>() >= min && value->get<int64_t>() <= max;
  if (!inRange)
    throw BadInput(name + " is " + describeJson(*value) + ", expected " + expected);
  return value->get<int64_t>();
}

int64_t product(std::initializer_list<int64_t> factors) {
  constexpr __int128 kLimit = __int128(1) << 62;
  __int128 out = 1;
  for (int64_t factor : factors) {
    out *= factor;
    if (out > kLimit)
      out = kLimit;
    if (out < -kLimit)
      out = -kLimit;
  }
  return int64_t(out);
}

std::string formatScale(double scale) {
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, scale);
    if (std::strtod(text, nullptr) == scale)
      break;
  }
  return text;
}

} // namespace ditc::engines
