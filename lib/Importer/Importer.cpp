//===- Importer.cpp - build the dit module of a diffusion pipeline --------===//
//
// The module holds the text encoder, the transformer (one function per
// expert), the denoising step and the VAE decoder. The transformer's body
// comes from the family's builder (Families/*.cpp) through GraphBuilder.
//
//===----------------------------------------------------------------------===//
#include "ditc/Importer/Importer.h"
#include "Family.h"
#include "GraphBuilder.h"
#include "TextGraph.h"
#include "VaeGraph.h"
#include "ditc/Support/BadInput.h"

#include "dit/IR/DitOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"


using namespace mlir;
using namespace mlir::dit;

namespace ditc {

Attribute buildModelAttr(MLIRContext &context, const ModelSpec &spec) {
  Builder b(&context);
  // Checked: a spec the attribute's verifier refuses gives a null attribute
  // and an error diagnostic, not an invalid attribute.
  auto emit = [&] { return emitError(b.getUnknownLoc()); };
  return ModelAttr::getChecked(
      llvm::function_ref<InFlightDiagnostic()>(emit), &context,
      StringRef(spec.info().name), StringRef(spec.className),
      spec.doubleBlocks, spec.singleBlocks, spec.numHeads, spec.headDim,
      spec.hiddenSize, spec.ffnSize, spec.textHiddenSize, spec.textEmbedDim,
      spec.latentChannels, spec.outChannels,
      b.getDenseI64ArrayAttr({spec.patch[0], spec.patch[1], spec.patch[2]}),
      spec.vaeSpatial, spec.vaeTemporal, spec.seqAlign, spec.experts);
}

Attribute buildWorkloadAttr(MLIRContext &context, const Workload &w) {
  Builder b(&context);
  auto emit = [&] { return emitError(b.getUnknownLoc()); };
  return WorkloadAttr::getChecked(
      llvm::function_ref<InFlightDiagnostic()>(emit), &context, w.batch,
      w.height, w.width, w.frames, w.latentFrames, w.latentHeight,
      w.latentWidth, w.imageTokens, w.textTokens, w.branches,
      b.getF64FloatAttr(w.guidanceScale), w.steps);
}

namespace {
/// Adds a function to the module and returns it.
func::FuncOp addFunction(OpBuilder &b, ModuleOp module, StringRef name,
                         TypeRange inputs, TypeRange results,
                         PipelineComponent component) {
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, b.getUnknownLoc(), name,
                                   b.getFunctionType(inputs, results));
  DitDialect::get(b.getContext())
      .getComponentAttrHelper()
      .setAttr(fn, PipelineComponentAttr::get(b.getContext(), component));
  return fn;
}

/// Names `fn`'s arguments as step inputs (`dit.input`, and `dit.branch` where
/// `branches[i]` >= 0), so passes and the plan never rely on positions.
void nameStepInputs(func::FuncOp fn, ArrayRef<StringRef> names,
                    ArrayRef<int64_t> branches = {}) {
  Builder b(fn.getContext());
  for (auto [i, name] : llvm::enumerate(names)) {
    fn.setArgAttr(i, DitDialect::kInputAttrName, b.getStringAttr(name));
    if (i < branches.size() && branches[i] >= 0)
      fn.setArgAttr(i, DitDialect::kBranchAttrName,
                    b.getI64IntegerAttr(branches[i]));
  }
}

} // namespace

OwningOpRef<ModuleOp> importModel(MLIRContext &context, const ModelSpec &spec,
                                  const Workload &w,
                                  const ImportOptions &options) {
  context.loadDialect<DitDialect, func::FuncDialect, tensor::TensorDialect,
                      arith::ArithDialect>();
  // loadModel only makes specs of registered families; a spec built by hand
  // may name any class.
  if (!findFamily(spec.className))
    throw BadInput(spec.configPath + ": class '" + spec.className +
                   "' is not a DiT family the importer knows, so it has no "
                   "block builder");
  if (spec.outChannels != spec.latentChannels)
    throw BadInput(spec.configPath + ": out_channels " +
                   std::to_string(spec.outChannels) + " differs from the " +
                   std::to_string(spec.latentChannels) +
                   " latent input channels; the scheduler step needs them "
                   "equal");
  // The readers check every field the ops' verifiers depend on. Should a
  // config still import to IR that does not verify, the verifier's message
  // becomes the bad-input error rather than a diagnostic of its own.
  std::string firstError;
  ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() != DiagnosticSeverity::Error ||
        !firstError.empty())
      return success();
    firstError = diagnostic.str();
    // The builders name each op's diffusers module (blocks.3.attn1).
    if (auto module = dyn_cast<NameLoc>(diagnostic.getLocation()))
      firstError += " (at " + module.getName().str() + ")";
    return success();
  });
  auto refuse = [&] {
    throw BadInput(spec.configPath + ": the " + spec.className +
                   " config imports to a graph that does not verify: " +
                   firstError +
                   "; a config field is outside what the dit ops accept");
  };
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  Attribute modelAttr = buildModelAttr(context, spec);
  Attribute workloadAttr = buildWorkloadAttr(context, w);
  if (!modelAttr || !workloadAttr)
    refuse();
  (*module)->setAttr(DitDialect::kModelAttrName, modelAttr);
  (*module)->setAttr(DitDialect::kWorkloadAttrName, workloadAttr);

  Type elt = options.elementType == ElementType::F32
                 ? Type(b.getF32Type())
                 : Type(b.getBF16Type());
  GraphBuilder graph(b, spec, w, elt);
  int64_t B = w.batch;
  RankedTensorType latents = graph.latentType(spec.latentChannels);
  RankedTensorType textType = graph.tensor({B, w.textTokens, spec.textEmbedDim});
  RankedTensorType pooledType = graph.tensor({B, spec.pooledDim});
  // 1 for a valid text token, 0 for padding: the tokenizer's attention mask.
  RankedTensorType textMaskType = graph.tensor({B, w.textTokens});
  auto scalarBatch = RankedTensorType::get({B}, b.getF32Type());
  auto sigmaType = RankedTensorType::get({}, b.getF32Type());

  // @text_encoder: the long text sequence, and the pooled CLIP vector for
  // families that take one. Where ditc knows the pipeline's encode_prompt
  // and the snapshot holds its encoders' configs, it takes the token ids
  // and holds the encoders' graphs (lib/Importer/TextGraph.cpp); otherwise
  // opaque components stand for them.
  SmallVector<Type> textOutputs{textType};
  if (spec.pooledDim)
    textOutputs.push_back(pooledType);
  if (spec.textMask)
    textOutputs.push_back(textMaskType);
  if (hasTextEncoderGraphs(spec)) {
    func::FuncOp fn = addFunction(b, *module, "text_encoder",
                                  textEncoderInputs(b, spec, w), textOutputs,
                                  PipelineComponent::TextEncoder);
    b.setInsertionPointToStart(fn.addEntryBlock());
    buildTextEncoderGraphs(b, fn, spec, w, elt);
  } else {
    func::FuncOp fn = addFunction(b, *module, "text_encoder", {}, textOutputs,
                                  PipelineComponent::TextEncoder);
    b.setInsertionPointToStart(fn.addEntryBlock());
    auto kind = ComponentKindAttr::get(&context, ComponentKind::TextEncoder);
    SmallVector<Value> results;
    results.push_back(ComponentOp::create(b, loc, TypeRange{textType}, kind,
                                            b.getStringAttr(spec.textEncoderClass),
                                            ValueRange{})
                          .getOutputs()[0]);
    if (spec.pooledDim)
      results.push_back(ComponentOp::create(b, loc, TypeRange{pooledType}, kind,
                                              b.getStringAttr("CLIPTextModel"),
                                              ValueRange{})
                            .getOutputs()[0]);
    if (spec.textMask) // the long encoder's tokenizer gives the mask
      results.push_back(ComponentOp::create(b, loc, TypeRange{textMaskType}, kind,
                                              b.getStringAttr(spec.textEncoderClass),
                                              ValueRange{})
                            .getOutputs()[0]);
    func::ReturnOp::create(b, loc, results);
  }

  // @transformer (and @transformer_2): the denoiser, block by block.
  SmallVector<Type> transformerInputs{latents, scalarBatch, textType};
  SmallVector<StringRef> transformerNames{"latents", "timestep", "text"};
  if (spec.pooledDim) {
    transformerInputs.push_back(pooledType);
    transformerNames.push_back("pooled_text");
  }
  if (spec.textMask) {
    transformerInputs.push_back(textMaskType);
    transformerNames.push_back("text_mask");
  }
  if (spec.guidanceEmbeds) {
    transformerInputs.push_back(scalarBatch);
    transformerNames.push_back("guidance");
  }
  std::vector<std::string> experts{"transformer"};
  if (spec.experts == 2)
    experts.push_back("transformer_2");
  for (size_t e = 0; e < experts.size(); ++e) {
    func::FuncOp fn = addFunction(b, *module, experts[e], transformerInputs,
                                  {latents},
                                  e == 0 ? PipelineComponent::Transformer
                                         : PipelineComponent::Transformer2);
    nameStepInputs(fn, transformerNames);
    graph.buildTransformer(fn);
  }

  // @denoise_step: one guidance branch per transformer call, the CFG
  // combine, and the flow-matching Euler update.
  for (size_t e = 0; e < experts.size(); ++e) {
    SmallVector<Type> inputs{latents, scalarBatch, sigmaType, sigmaType};
    SmallVector<StringRef> names{"latents", "timestep", "sigma", "sigma_next"};
    SmallVector<int64_t> branches(names.size(), -1);
    for (int64_t branch = 0; branch < w.branches; ++branch) {
      inputs.append(textOutputs.begin(), textOutputs.end());
      names.push_back("text");
      if (spec.pooledDim)
        names.push_back("pooled_text");
      if (spec.textMask)
        names.push_back("text_mask");
      branches.resize(names.size(), branch);
    }
    if (spec.guidanceEmbeds) {
      inputs.push_back(scalarBatch);
      names.push_back("guidance");
    }
    std::string name = e == 0 ? "denoise_step" : "denoise_step_2";
    func::FuncOp fn = addFunction(b, *module, name, inputs, {latents},
                                  PipelineComponent::DenoiseStep);
    nameStepInputs(fn, names, branches);
    b.setInsertionPointToStart(fn.addEntryBlock());
    auto args = fn.getArguments();
    SmallVector<Value> predictions;
    size_t perBranch = textOutputs.size();
    for (int64_t branch = 0; branch < w.branches; ++branch) {
      SmallVector<Value> callArgs{args[0], args[1]};
      for (size_t j = 0; j < perBranch; ++j)
        callArgs.push_back(args[4 + branch * perBranch + j]);
      if (spec.guidanceEmbeds)
        callArgs.push_back(args.back());
      predictions.push_back(
          func::CallOp::create(b, loc, experts[e], TypeRange{latents}, callArgs)
              .getResult(0));
    }
    Value velocity = predictions.front();
    if (predictions.size() > 1)
      velocity = CFGCombineOp::create(b, 
          loc, latents, predictions,
          b.getF64ArrayAttr(SmallVector<double>(predictions.size() - 1,
                                                w.guidanceScale)));
    Value stepped = SchedulerStepOp::create(b, 
        loc, latents,
        SchedulerKindAttr::get(&context, SchedulerKind::FlowMatchEuler),
        args[0], velocity, args[2], args[3]);
    func::ReturnOp::create(b, loc, stepped);
  }

  // @vae_decode: latents to pixels.
  {
    SmallVector<int64_t> pixels{B, 3};
    if (spec.info().video)
      pixels.push_back(w.frames);
    pixels.push_back(w.height);
    pixels.push_back(w.width);
    RankedTensorType video = graph.tensor(pixels);
    func::FuncOp fn =
        addFunction(b, *module, "vae_decode", {latents}, {video},
                    PipelineComponent::Vae);
    b.setInsertionPointToStart(fn.addEntryBlock());
    auto decoder = ComponentOp::create(
        b, loc, TypeRange{video},
        ComponentKindAttr::get(&context, ComponentKind::VaeDecoder),
        b.getStringAttr(spec.vaeClass), ValueRange{fn.getArgument(0)});
    // A decoder ditc models gets its graph; another class stays opaque
    // (dit-run writes latents for it and says so).
    if (!spec.vaeConfig.empty() && isModeledVaeClass(spec.vaeClass))
      buildVaeDecoderBody(b, decoder, spec);
    func::ReturnOp::create(b, loc, decoder.getOutputs()[0]);
  }

  if (failed(verify(*module)))
    refuse();
  return module;
}

} // namespace ditc
