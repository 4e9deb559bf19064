//===- WeightsReport.h - a checkpoint against its model ---------*- C++ -*-===//
//
// Compares the tensors of a diffusers snapshot with the parameters of the
// model its config describes. The expected tensors are the parameters the
// imported transformer's ops name through DitParameterOpInterface, the
// same ones the plan serializer writes into every program, and those of
// @vae_decode's graph for a pipeline folder's vae/; the snapshot is
// read by the checkpoint library (ditc/Checkpoint/Snapshot.h) that dit-run
// loads through, so what `ditc weights` accepts is what dit-run loads.
//
//===----------------------------------------------------------------------===//
#ifndef DITC_TOOLS_DITC_WEIGHTSREPORT_H
#define DITC_TOOLS_DITC_WEIGHTSREPORT_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ditc {

struct WeightsProblem {
  enum class Kind { Missing, Unexpected, MisShaped, MisTyped };
  Kind kind;
  std::string name;
  std::vector<int64_t> shape;          // stored (expected, when missing)
  std::vector<int64_t> expectedShape;  // mis-shaped only
  std::string dtype, expectedDtype;    // stored; mis-typed: the snapshot's
};

struct ComponentReport {
  std::string component; // "transformer", "transformer_2", "vae"
  std::string folder;
  int64_t expected = 0, stored = 0;
  /// The VAE's encoder tensors (encoder.*, quant_conv.*): stored with the
  /// decoder, never read by the decode, so neither expected nor a problem.
  int64_t unused = 0;
  /// Why a component was not compared (a vae/ folder without weights, a
  /// VAE class ditc does not model); empty when it was.
  std::string notChecked;
  std::map<std::string, int64_t> bytesPerDtype, tensorsPerDtype;
  std::vector<WeightsProblem> problems; // by kind, then name
};

struct WeightsReport {
  std::string snapshot, layout, model, className;
  /// The dtype holding most of the transformers' bytes: the one each of
  /// their tensors is expected to share. The VAE's tensors share their own
  /// (diffusers pipelines often keep the VAE in float32).
  std::string dtype, vaeDtype;
  std::vector<ComponentReport> components;
  std::map<std::string, int64_t> bytesPerDtype;
  bool ok() const;
};

/// Opens the snapshot `dir` (a pipeline folder or a transformer folder),
/// imports the model its config describes, and compares. Throws BadInput
/// (exit 2) for an unreadable or invalid file or folder.
WeightsReport checkWeights(const std::string &dir);

std::string weightsReportText(const WeightsReport &report);
nlohmann::json weightsReportJson(const WeightsReport &report);

} // namespace ditc

#endif // DITC_TOOLS_DITC_WEIGHTSREPORT_H
