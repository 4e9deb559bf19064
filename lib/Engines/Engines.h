//===- Engines.h - the engine vocabularies, and what they share -*- C++ -*-===//
#ifndef DITC_LIB_ENGINES_ENGINES_H
#define DITC_LIB_ENGINES_ENGINES_H

#include "ditc/Engines/Engine.h"

#include <nlohmann/json.hpp>

#include <initializer_list>

namespace ditc::engines {

const Engine &sglangEngine();
const Engine &vllmOmniEngine();
const Engine &xditEngine();
const Engine &diffusersEngine();

/// The diffusers family name of the model ("wan", "flux", "hunyuan_video").
std::string familyOf(const ModelSpec &spec);
/// How a launch line names the model: its first Hugging Face id when it is
/// bundled with one, else ditc's name for it.
std::string modelWord(const ModelSpec &spec);
/// The product of `factors`, saturated at +-2^62: a line's degrees may be
/// absurd (each up to 2^20), and their product must not overflow.
int64_t product(std::initializer_list<int64_t> factors);

/// A config's integer field: nullopt when `value` is null (absent); else an
/// integer in [min, max] (an unsigned one past 2^63 included), or BadInput
/// "NAME is VALUE, expected EXPECTED".
std::optional<int64_t> jsonInteger(const nlohmann::json *value, const std::string &name,
                                   int64_t min = -(int64_t(1) << 20),
                                   int64_t max = int64_t(1) << 20,
                                   const std::string &expected =
                                       "an integer from -1048576 to 1048576");

/// The word an emitted multi-node line puts where the first node's address
/// goes; the line's note says to replace it.
constexpr const char *kFirstNodeAddress = "NODE0_ADDR";
/// "run this line on each of the N nodes, with RANKFLAG 0 to N-1; NODE0_ADDR
/// stands for node 0's address".
std::string multiNodeNote(int64_t nodes, const std::string &rankFlag);

/// A guidance scale as a flag value: the shortest text that reads back as
/// the same double.
std::string formatScale(double scale);
/// The workload as a launch line's sampling flags: --height, --width,
/// --num-frames (a video model), --num-inference-steps and --guidance-scale,
/// their words joined by `separator` ('-' or '_').
void appendWorkload(std::vector<std::string> &argv, const EngineTarget &target,
                    char separator);

} // namespace ditc::engines

#endif // DITC_LIB_ENGINES_ENGINES_H
