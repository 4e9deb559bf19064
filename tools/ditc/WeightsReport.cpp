//===- WeightsReport.cpp - a checkpoint against its model -------------===//
#include "WeightsReport.h"

#include "ditc/Checkpoint/Snapshot.h"
#include "ditc/Importer/Importer.h"
#include "ditc/Importer/LoadModel.h"
#include "ditc/InitAll.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Strings.h"
#include "ditc/Support/Utf8.h"
#include "ditc/Transforms/Pipelines.h"

#include "dit/IR/DitInterfaces.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <sstream>

namespace ditc {

using nlohmann::json;

bool WeightsReport::ok() const {
  return std::all_of(components.begin(), components.end(),
                     [](const ComponentReport &c) { return c.problems.empty(); });
}

/// The parameters the transformer function `component` of the one-rank
/// partitioned module reads, by name, with the shape the checkpoint stores
/// each in: what the plan serializer writes as a one-rank plan's params
/// (DitParameterOpInterface), whole.
static std::map<std::string, std::vector<int64_t>>
expectedTensors(mlir::ModuleOp module, const std::string &component) {
  std::map<std::string, std::vector<int64_t>> expected;
  auto fn = module.lookupSymbol<mlir::func::FuncOp>(component);
  if (!fn)
    throw std::runtime_error("the imported module has no @" + component);
  fn.walk([&](mlir::dit::DitParameterOpInterface op) {
    llvm::SmallVector<mlir::dit::ParameterSpec> specs;
    op.getParameters(/*tp=*/1, specs);
    for (const mlir::dit::ParameterSpec &spec : specs) {
      // The checkpoint's own layout where it differs from the op's (a
      // convolution kernel, whose row-major reshape the op reads).
      const auto &stored =
          spec.checkpointShape.empty() ? spec.shape : spec.checkpointShape;
      expected.emplace(spec.name, std::vector<int64_t>(stored.begin(), stored.end()));
    }
  });
  return expected;
}

WeightsReport checkWeights(const std::string &dir) {
  // The model first: a config the importer refuses names its field.
  ModelSpec spec = loadModel(dir);
  checkpoint::Snapshot snapshot(dir);
  Workload workload = resolveWorkload(spec, WorkloadOptions{});
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  auto module = importModel(context, spec, workload);
  // Every module the importer writes, before partitioning: a checkpoint
  // also stores what the graph computes but never uses (Qwen-Image's last
  // block updates the text stream that nothing reads afterwards, so the
  // partition drops those ops and a plan never reads their tensors).
  std::map<std::string, std::map<std::string, std::vector<int64_t>>> imported;
  imported["transformer"] = expectedTensors(*module, "transformer");
  if (spec.experts == 2)
    imported["transformer_2"] = expectedTensors(*module, "transformer_2");
  // The decoder's parameters, from @vae_decode's graph (empty when the VAE
  // class is one ditc keeps opaque).
  std::map<std::string, std::vector<int64_t>> vaeExpected =
      expectedTensors(*module, "vae_decode");
  // The one-rank partition, as `ditc compile` runs it: its ops hold the
  // latents as patch tokens, the layout the plan's parameters are given
  // for, so the expected tensors are a plan's, plus the dead ones above.
  mlir::PassManager pm(&context);
  PartitionOptions options;
  options.checkLegality = false;
  options.degrees.push_back("tp=1");
  buildPartitionPipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    throw std::runtime_error("the one-rank partition of " + spec.name +
                             " failed (diagnostics on stderr)");

  WeightsReport report;
  report.snapshot = escapeInvalidUtf8(dir);
  report.layout = snapshot.layout() == checkpoint::Snapshot::Layout::Pipeline
                      ? "pipeline"
                      : "transformer";
  report.model = escapeInvalidUtf8(spec.name);
  report.className = spec.className;

  std::vector<std::string> components = {"transformer"};
  if (spec.experts == 2)
    components.push_back("transformer_2");
  // A snapshot whose config describes one expert but that holds a second
  // transformer folder: its tensors are all unexpected.
  for (const std::string &c : snapshot.components())
    if (std::find(components.begin(), components.end(), c) == components.end())
      components.push_back(c);

  std::map<std::string, int64_t> dtypeBytes;
  for (const std::string &c : components) {
    ComponentReport out;
    out.component = c;
    std::map<std::string, std::vector<int64_t>> expected;
    if (c == "transformer" || spec.experts == 2) {
      expected = expectedTensors(*module, c);
      for (const auto &[name, shape] : imported[c])
        expected.emplace(name, shape);
    }
    out.expected = int64_t(expected.size());
    if (!snapshot.has(c)) {
      // loadModel found this expert's config, so the snapshot names it
      // but holds no folder for it: every tensor is missing.
      out.folder = snapshot.folder() + "/" + c;
      for (const auto &[name, shape] : expected)
        out.problems.push_back({WeightsProblem::Kind::Missing, name, shape, {}, "", ""});
      report.components.push_back(std::move(out));
      continue;
    }
    const checkpoint::TransformerWeights &weights = snapshot.component(c);
    out.folder = escapeInvalidUtf8(weights.folder());
    for (const std::string &name : weights.names()) {
      checkpoint::TensorLocation where = weights.find(name);
      const checkpoint::StoredTensor &tensor = *where.tensor;
      std::string dtype = checkpoint::storedTypeName(tensor.type);
      int64_t bytes = tensor.end - tensor.begin;
      ++out.stored;
      out.bytesPerDtype[dtype] += bytes;
      ++out.tensorsPerDtype[dtype];
      report.bytesPerDtype[dtype] += bytes;
      auto it = expected.find(name);
      if (it == expected.end()) {
        out.problems.push_back({WeightsProblem::Kind::Unexpected,
                                escapeInvalidUtf8(name), tensor.shape, {}, dtype, ""});
        continue;
      }
      if (tensor.shape != it->second)
        out.problems.push_back({WeightsProblem::Kind::MisShaped, name, tensor.shape,
                                it->second, dtype, ""});
    }
    for (const auto &[name, shape] : expected)
      if (!weights.find(name).tensor)
        out.problems.push_back({WeightsProblem::Kind::Missing, name, shape, {}, "", ""});
    report.components.push_back(std::move(out));
  }

  // A pipeline folder's vae/: the decoder's tensors against @vae_decode.
  std::unique_ptr<checkpoint::TransformerWeights> vaeWeights;
  std::string vaeFolder = dir + "/vae";
  if (snapshot.layout() == checkpoint::Snapshot::Layout::Pipeline &&
      llvm::sys::fs::is_directory(vaeFolder)) {
    ComponentReport out;
    out.component = "vae";
    out.folder = escapeInvalidUtf8(vaeFolder);
    out.expected = int64_t(vaeExpected.size());
    bool haveWeights =
        llvm::sys::fs::exists(vaeFolder + "/" + checkpoint::kWeightsFile) ||
        llvm::sys::fs::exists(vaeFolder + "/" + checkpoint::kWeightsIndexFile);
    if (!haveWeights)
      out.notChecked = "holds no weights file (dit-run writes latents, not pixels, without one)";
    else if (vaeExpected.empty())
      out.notChecked = "holds a " + spec.vaeClass + ", whose decoder ditc does not model yet";
    if (out.notChecked.empty()) {
      vaeWeights = std::make_unique<checkpoint::TransformerWeights>(vaeFolder, "vae");
      for (const std::string &name : vaeWeights->names()) {
        const checkpoint::StoredTensor &tensor = *vaeWeights->find(name).tensor;
        std::string dtype = checkpoint::storedTypeName(tensor.type);
        ++out.stored;
        out.bytesPerDtype[dtype] += tensor.end - tensor.begin;
        ++out.tensorsPerDtype[dtype];
        report.bytesPerDtype[dtype] += tensor.end - tensor.begin;
        auto it = vaeExpected.find(name);
        if (it == vaeExpected.end()) {
          // The encoder side of the autoencoder, saved with it.
          if (llvm::StringRef(name).starts_with("encoder.") ||
              llvm::StringRef(name).starts_with("quant_conv.")) {
            ++out.unused;
            continue;
          }
          out.problems.push_back({WeightsProblem::Kind::Unexpected,
                                  escapeInvalidUtf8(name), tensor.shape, {}, dtype, ""});
        } else if (tensor.shape != it->second) {
          out.problems.push_back({WeightsProblem::Kind::MisShaped, name, tensor.shape,
                                  it->second, dtype, ""});
        }
      }
      for (const auto &[name, shape] : vaeExpected)
        if (!vaeWeights->find(name).tensor)
          out.problems.push_back({WeightsProblem::Kind::Missing, name, shape, {}, "", ""});
    }
    report.components.push_back(std::move(out));
  }

  // Mis-typed: every tensor of a checkpoint shares one dtype, as diffusers
  // saves them (save_pretrained casts the whole model). The one that holds
  // most bytes is the snapshot's; any other is reported. (A dtype dit-run
  // cannot load at all, such as F64 or I64, makes the file invalid: the
  // checkpoint library refuses it, exit 2.)
  // The majority dtype of some components' bytes.
  auto majorityDtype = [&](bool vae) {
    std::map<std::string, int64_t> bytes;
    for (const ComponentReport &c : report.components)
      if ((c.component == "vae") == vae)
        for (const auto &[dtype, n] : c.bytesPerDtype)
          bytes[dtype] += n;
    std::string best;
    for (const auto &[dtype, n] : bytes)
      if (best.empty() || n > bytes.at(best))
        best = dtype;
    return best;
  };
  report.dtype = majorityDtype(false);
  report.vaeDtype = majorityDtype(true);
  for (ComponentReport &out : report.components) {
    bool vae = out.component == "vae";
    const checkpoint::TransformerWeights *weights =
        vae ? vaeWeights.get()
            : snapshot.has(out.component) ? &snapshot.component(out.component) : nullptr;
    if (!weights)
      continue;
    const std::string &expectedDtype = vae ? report.vaeDtype : report.dtype;
    for (const std::string &name : weights->names()) {
      const checkpoint::StoredTensor &tensor = *weights->find(name).tensor;
      std::string dtype = checkpoint::storedTypeName(tensor.type);
      if (dtype != expectedDtype)
        out.problems.push_back({WeightsProblem::Kind::MisTyped, escapeInvalidUtf8(name),
                                tensor.shape, {}, dtype, expectedDtype});
    }
    std::stable_sort(out.problems.begin(), out.problems.end(),
                     [](const WeightsProblem &a, const WeightsProblem &b) {
                       return a.kind != b.kind ? a.kind < b.kind : a.name < b.name;
                     });
  }
  return report;
}

static const char *kindKey(WeightsProblem::Kind kind) {
  switch (kind) {
  case WeightsProblem::Kind::Missing: return "missing";
  case WeightsProblem::Kind::Unexpected: return "unexpected";
  case WeightsProblem::Kind::MisShaped: return "mis_shaped";
  case WeightsProblem::Kind::MisTyped: return "mis_typed";
  }
  return "";
}

static std::string bytesText(int64_t bytes) {
  char text[48];
  std::snprintf(text, sizeof text, "%lld bytes (%.1f MiB)", (long long)bytes,
                double(bytes) / 1048576.0);
  return text;
}

std::string weightsReportText(const WeightsReport &report) {
  std::ostringstream os;
  os << "snapshot " << report.snapshot << " (" << report.layout << " folder): "
     << report.model << ", " << report.className << "\n";
  size_t problems = 0;
  for (const ComponentReport &c : report.components) {
    if (!c.notChecked.empty()) {
      os << c.component << ": not checked: " << c.folder << " " << c.notChecked << "\n";
      continue;
    }
    os << c.component << ": " << c.expected << " tensors expected, " << c.stored
       << " stored in " << c.folder << "\n";
    for (const auto &[dtype, bytes] : c.bytesPerDtype)
      os << "  " << dtype << ": " << c.tensorsPerDtype.at(dtype) << " tensors, "
         << bytesText(bytes) << "\n";
    if (c.unused)
      os << "  " << c.unused << " encoder tensors (encoder.*, quant_conv.*): not read by the decode\n";
    for (const WeightsProblem &p : c.problems) {
      ++problems;
      switch (p.kind) {
      case WeightsProblem::Kind::Missing:
        os << "  missing: " << p.name << " " << bracketedList(p.shape) << "\n";
        break;
      case WeightsProblem::Kind::Unexpected:
        os << "  unexpected: " << p.name << " " << bracketedList(p.shape) << " " << p.dtype
           << " (the model has no such parameter)\n";
        break;
      case WeightsProblem::Kind::MisShaped:
        os << "  mis-shaped: " << p.name << " is " << bracketedList(p.shape)
           << ", expected " << bracketedList(p.expectedShape) << "\n";
        break;
      case WeightsProblem::Kind::MisTyped:
        os << "  mis-typed: " << p.name << " is " << p.dtype << ", expected "
           << p.expectedDtype << " like the " << (c.component == "vae" ? "VAE's" : "snapshot's")
           << " other tensors\n";
        break;
      }
    }
  }
  os << "total:";
  for (const auto &[dtype, bytes] : report.bytesPerDtype)
    os << " " << dtype << " " << bytesText(bytes) << ";";
  if (report.bytesPerDtype.empty())
    os << " no tensors;";
  if (problems == 0)
    os << " ok: every tensor the model needs, in its shape, and nothing else\n";
  else
    os << " " << problems << " problem" << (problems == 1 ? "" : "s") << "\n";
  return os.str();
}

json weightsReportJson(const WeightsReport &report) {
  json out = {{"snapshot", report.snapshot},
              {"layout", report.layout},
              {"model", report.model},
              {"class_name", report.className},
              {"dtype", report.dtype},
              {"vae_dtype", report.vaeDtype},
              {"ok", report.ok()},
              {"bytes_per_dtype", report.bytesPerDtype},
              {"components", json::array()}};
  for (const ComponentReport &c : report.components) {
    json component = {{"name", c.component},
                      {"folder", c.folder},
                      {"expected", c.expected},
                      {"stored", c.stored},
                      {"bytes_per_dtype", c.bytesPerDtype},
                      {"tensors_per_dtype", c.tensorsPerDtype},
                      {"unused", c.unused}};
    if (!c.notChecked.empty())
      component["not_checked"] = c.notChecked;
    for (const char *key : {"missing", "unexpected", "mis_shaped", "mis_typed"})
      component[key] = json::array();
    for (const WeightsProblem &p : c.problems) {
      json entry = {{"name", p.name}, {"shape", p.shape}};
      if (p.kind == WeightsProblem::Kind::MisShaped)
        entry["expected_shape"] = p.expectedShape;
      if (!p.dtype.empty())
        entry["dtype"] = p.dtype;
      if (p.kind == WeightsProblem::Kind::MisTyped)
        entry["expected_dtype"] = p.expectedDtype;
      component[kindKey(p.kind)].push_back(entry);
    }
    out["components"].push_back(component);
  }
  return out;
}

} // namespace ditc
