//===- Engine.h - other serving engines' parallel vocabularies --*- C++ -*-===//
//
// SGLang Diffusion, vLLM-Omni, xDiT and diffusers each name the parallel
// axes their own way, derive some degrees themselves, and refuse (or
// silently accept) configurations by their own rules. An Engine reads one
// engine's launch line (or Python config, as JSON) the way that engine
// does at a recorded commit, says what it derived and what it would
// refuse, and writes the launch line for a ditc configuration back in the
// engine's words. ditc's own rules then judge the configuration as for any
// other request (tools/ditc, `check --from`, `--emit`, `search --engine`).
//
//===----------------------------------------------------------------------===//
#ifndef DITC_ENGINES_ENGINE_H
#define DITC_ENGINES_ENGINE_H

#include "ditc/Analysis/Deployment.h"
#include "ditc/Importer/ModelSpec.h"

#include <optional>
#include <string>
#include <vector>

namespace ditc::engines {

/// One of an engine's own rules: a stable id, what it checks, and where the
/// engine's source says so (file:line at the engine's recorded commit).
struct EngineRule {
  std::string id;
  std::string summary;
  std::string source;
};

/// A verdict of an engine rule on one configuration.
struct EngineFinding {
  std::string rule;    // an EngineRule id
  std::string message; // names the numbers
};

/// What an engine makes of a launch line, in ditc's terms.
struct EngineReading {
  /// The degrees and world size the engine runs (num_gpus always set).
  ParallelFlags flags;
  /// Workload values the line sets (height, width, frames, steps, guidance,
  /// max sequence length); the rest keep ditc's (the family's) defaults.
  WorkloadOptions workload;
  /// Each value the engine derived rather than read, and why, in order.
  std::vector<std::string> derivations;
  /// The engine's own refusals of the line itself (before the model is
  /// known): a world size its degrees do not fill, a degree below 1.
  std::vector<EngineFinding> refusals;
  /// The attention backend the line names, in the engine's words.
  std::optional<std::string> attentionBackend;
  /// The model the line names (--model, --model-path), as given.
  std::optional<std::string> model;
};

/// A configuration as ditc resolved it, for the engine rules that need the
/// model (heads, family, latent rows) and for emitting a launch line.
struct EngineTarget {
  const Deployment &deployment;
  const ModelSpec &spec;
  const Workload &workload;
  /// The backend the line named (a read line), or none (emit: the engine's
  /// default).
  std::optional<std::string> attentionBackend;
};

/// A launch line for one engine: its words, and the same as one string a
/// shell reads back (each word quoted where it needs it).
struct EmittedLaunch {
  std::vector<std::string> argv;
  std::string text;
  /// What the line alone does not say: on a multi-node deployment, that it
  /// runs once per node with that node's rank, and which word stands for
  /// the first node's address.
  std::vector<std::string> notes;
};

class Engine {
public:
  virtual ~Engine() = default;
  /// The name `--from` and `--emit` take ("sglang").
  virtual std::string name() const = 0;
  /// The engine as people call it ("SGLang Diffusion").
  virtual std::string title() const = 0;
  /// "owner/repo" and the commit whose source the vocabulary follows.
  virtual std::string repository() const = 0;
  virtual std::string commit() const = 0;
  /// Every rule the engine applies, in reporting order.
  virtual const std::vector<EngineRule> &rules() const = 0;
  /// How the engine lays its ranks out over the axes, outermost first (its
  /// RankGenerator order, or its device mesh's), all seven axes: an axis
  /// the engine lacks sits where ditc's default order has it. A line read
  /// from the engine is judged in this order (`check --from` refuses
  /// --mesh-order), and a configuration in another order is refused by
  /// rankOrderRule() when emitted. Every engine ditc knows lays its ranks
  /// out in ditc's default order on the axes it has (docs/engines.md, "Rank
  /// order"; each engine's ENGINE-rank-order rule cites its source).
  virtual std::vector<Axis> rankOrder() const {
    return std::vector<Axis>(kAllAxes.begin(), kAllAxes.end());
  }
  /// The rule that refuses another rank order, or explicit replica rank
  /// lists the engine cannot place: "ENGINE-rank-order", one of rules().
  std::string rankOrderRule() const { return name() + "-rank-order"; }
  /// Reads the engine's launch line (the words after `--`; for a
  /// Python-configured engine, one word holding the config as JSON) for
  /// `spec` (an engine may derive degrees from the model's defaults, as
  /// SGLang's automatic CFG parallel does). Throws BadInput for an unknown
  /// flag (with the engine's nearest one), a value of the wrong type, or one
  /// no engine could take.
  virtual EngineReading read(const std::vector<std::string> &words,
                             const ModelSpec &spec) const = 0;
  /// The engine's rules that need the model: what it refuses of `target`
  /// (at launch, or later as a crash the source makes certain).
  virtual std::vector<EngineFinding> check(const EngineTarget &target) const = 0;
  /// The engine's launch line for `target`, or the findings that say why
  /// the engine cannot run it (then `refusals` is non-empty): check()'s, a
  /// rank order the engine cannot lay out (rankOrderRule()), then
  /// launchLine()'s. A launch line carries a note when ditc's plan splits
  /// the text encoder or the VAE, which no engine flag ditc writes carries.
  EmittedLaunch emit(const EngineTarget &target, std::vector<EngineFinding> &refusals) const;

  /// "xDiT at 175e0bf": for messages and emitted lines.
  std::string version() const { return title() + " at " + commit().substr(0, 7); }
  /// The rule with this id (one of rules()).
  const EngineRule &rule(const std::string &id) const;

protected:
  /// The target as the engine's line runs it, where emitting chooses
  /// something the request left open (diffusers: a K/V split's backend).
  virtual EngineTarget emittedTarget(const EngineTarget &given) const { return given; }
  /// Appends to `refusals` what only an emitted line refuses (emit() has
  /// put check()'s and the rank order's there); returns the line when
  /// `refusals` stays empty.
  virtual EmittedLaunch launchLine(const EngineTarget &target,
                                   std::vector<EngineFinding> &refusals) const = 0;
};

/// The engines ditc knows, in `--help` order.
const std::vector<const Engine *> &knownEngines();
/// The engine named `name`; throws BadInput naming `where` and listing the
/// engines ditc knows otherwise.
const Engine &findEngine(const std::string &where, const std::string &name);

/// "dp, cfg, pp, ring, kv_gather, ulysses, tp": `order` for a message.
std::string describeOrder(const std::vector<Axis> &order);

/// `words` as one shell line: each word that holds anything but
/// [A-Za-z0-9_./=:,@%+-] single-quoted.
std::string shellLine(const std::vector<std::string> &words);

} // namespace ditc::engines

#endif // DITC_ENGINES_ENGINE_H
