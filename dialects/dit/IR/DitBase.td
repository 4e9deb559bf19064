//===- DitBase.td - dit dialect definition and enums ------*- tablegen -*-===//
//
// The `dit` dialect: a tensor-level diffusion-transformer graph with static
// shapes, plus the model, workload and mesh metadata that sharding needs.
//
//===----------------------------------------------------------------------===//

#ifndef DIT_BASE_TD
#define DIT_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Dit_Dialect : Dialect {
  let name = "dit";
  let cppNamespace = "::mlir::dit";
  let summary = "Diffusion-transformer graphs with sharding metadata";
  let description = [{
    The `dit` dialect holds one diffusion pipeline: a function per pipeline
    component (`@text_encoder`, `@transformer`, `@denoise_step`,
    `@vae_decode`). The transformer is unrolled block by block; every op of a
    block carries the discardable `dit.block` index so that pipeline
    parallelism can assign it to a stage. Parameters are referred to by the
    name they have in the model's checkpoint (`weight = "blocks.3.attn1.to_q"`)
    rather than as SSA values, which keeps the graph small and lets each rank
    materialize only its own slice.

    Module attributes:
      * `dit.model`    : `#dit.model<...>`    architecture facts.
      * `dit.workload` : `#dit.workload<...>` resolution, frames, tokens.
      * `dit.mesh`     : `#dit.mesh<...>`     optional parallel degrees.
      * `dit.deployment` : `#dit.deployment<...>` optional full deployment
        (per-component degrees, rank lists, nodes, signals).

    Argument attributes of `@transformer` and `@denoise_step`:
      * `dit.input`  : which step input the argument is: `"latents"`,
        `"timestep"`, `"sigma"`, `"sigma_next"`, `"text"`, `"pooled_text"`,
        `"text_mask"` (`[B, L]`, 1 for a valid text token and 0 for
        padding, as the tokenizer's attention mask) or `"guidance"`. Each name appears once per function (the text
        inputs once per branch). Passes and the plan find inputs by it,
        never by position.
      * `dit.branch` : on the text inputs of a step, the guidance branch
        they feed (0 = conditional).

    The partition passes hand their results on in further discardable
    attributes (`dit.mesh_axes`, `dit.groups`, `dit.sharding`, `dit.tp`,
    `dit.attention_plan`, `dit.role`, ...), typed by the attributes and
    enums below and checked by the dialect's attribute verifier;
    docs/architecture.md tables which pass writes and which reads each.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  // The hand-offs between the partitioner's passes. Each has a typed helper
  // (`getTpAttrHelper()` ...) and is checked by verifyOperationAttribute;
  // docs/architecture.md tables which pass writes and which reads each one.
  let discardableAttrs = (ins
    // Written by the importer.
    "::mlir::IntegerAttr":$block,
    "::mlir::dit::ModelAttr":$model,
    "::mlir::dit::WorkloadAttr":$workload,
    "::mlir::dit::MeshAttr":$mesh,
    "::mlir::dit::DeploymentAttr":$deployment,
    "::mlir::dit::PipelineComponentAttr":$component,
    // dit-mesh-layout (on the module).
    "::mlir::dit::AxesAttr":$mesh_axes,
    "::mlir::dit::GroupsAttr":$groups,
    // dit-propagate-sharding (on transformer ops).
    "::mlir::ArrayAttr":$sharding,
    "::mlir::dit::TPRoleAttr":$tp,
    "::mlir::DenseI64ArrayAttr":$tp_segments,
    "::mlir::dit::AxesAttr":$reduce_stats_over,
    "::mlir::dit::AttentionPlanAttr":$attention_plan,
    "::mlir::dit::LatentLayoutAttr":$latent_layout,
    // dit-insert-collectives (on ring attention).
    "::mlir::IntegerAttr":$ring_axis,
    // dit-split-stages (on transformer functions).
    "::mlir::IntegerAttr":$stage,
    "::mlir::ArrayAttr":$stages,
    // dit-lower-roles (module, role functions, between-step transfers).
    "::mlir::ArrayAttr":$roles,
    "::mlir::DenseI64ArrayAttr":$rank_roles,
    "::mlir::dit::RoleAttr":$role,
    "::mlir::UnitAttr":$between_steps,
    // dit-partition-vae (band programs, and their ops that need every band).
    "::mlir::IntegerAttr":$vae_band,
    "::mlir::UnitAttr":$band_collective
  );
  let extraClassDeclaration = [{
    /// Registers the attributes (defined in DitAttrs.cpp, next to their
    /// storage classes).
    void registerAttributes();

    /// The loaded dialect, for its discardable-attribute helpers. Passes
    /// that use them list the dialect in their dependentDialects.
    static DitDialect &get(::mlir::MLIRContext *context) {
      return *context->getLoadedDialect<DitDialect>();
    }

    /// Discardable attribute naming the transformer block an op belongs to.
    static constexpr ::llvm::StringLiteral kBlockAttrName = "dit.block";
    static constexpr ::llvm::StringLiteral kModelAttrName = "dit.model";
    static constexpr ::llvm::StringLiteral kWorkloadAttrName = "dit.workload";
    static constexpr ::llvm::StringLiteral kMeshAttrName = "dit.mesh";
    static constexpr ::llvm::StringLiteral kDeploymentAttrName = "dit.deployment";
    static constexpr ::llvm::StringLiteral kComponentAttrName = "dit.component";
    /// Argument attributes the importer sets on the step and transformer
    /// functions: which step input an argument is, and for the text inputs
    /// of a step, which guidance branch it feeds.
    static constexpr ::llvm::StringLiteral kInputAttrName = "dit.input";
    static constexpr ::llvm::StringLiteral kBranchAttrName = "dit.branch";
    /// The values `dit.input` may take, as the plan's `inputs` name them.
    static ::llvm::ArrayRef<::llvm::StringLiteral> stepInputNames();
    /// The model families `#dit.model<family = ...>` may name: the families
    /// the importer builds (ImporterTest checks the two lists agree), since
    /// the cost model and the runtime pick per-family rules by this name.
    static ::llvm::ArrayRef<::llvm::StringLiteral> modelFamilies();
  }];
}

class Dit_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dit_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Dit_AttentionKind : I32EnumAttr<"AttentionKind", "attention pattern", [
    I32EnumAttrCase<"Self", 0, "self">,
    I32EnumAttrCase<"Cross", 1, "cross">,
    I32EnumAttrCase<"Joint", 2, "joint">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_AttentionKindAttr : EnumAttr<Dit_Dialect, Dit_AttentionKind, "attention_kind"> {
  let assemblyFormat = "$value";
}

def Dit_QKVLayout : I32EnumAttr<"QKVLayout", "how Q, K and V reach attention", [
    I32EnumAttrCase<"Separate", 0, "separate">,
    I32EnumAttrCase<"Stacked", 1, "stacked">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_QKVLayoutAttr : EnumAttr<Dit_Dialect, Dit_QKVLayout, "qkv_layout"> {
  let assemblyFormat = "$value";
}

def Dit_KVCache : I32EnumAttr<"KVCache", "key/value cache kind", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Paged", 1, "paged">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_KVCacheAttr : EnumAttr<Dit_Dialect, Dit_KVCache, "kv_cache"> {
  let assemblyFormat = "$value";
}

def Dit_PatchKernel : I32EnumAttr<"PatchKernel",
    "the diffusers module that projects a patch", [
    I32EnumAttrCase<"Linear", 0, "linear">,
    I32EnumAttrCase<"Conv2d", 1, "conv2d">,
    I32EnumAttrCase<"Conv3d", 2, "conv3d">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_PatchKernelAttr : EnumAttr<Dit_Dialect, Dit_PatchKernel, "patch_kernel"> {
  let assemblyFormat = "$value";
}

def Dit_FeatureOrder : I32EnumAttr<"FeatureOrder",
    "the order of a patch token's pt * ph * pw * C features", [
    I32EnumAttrCase<"ChannelsLast", 0, "channels_last">,
    I32EnumAttrCase<"ChannelsFirst", 1, "channels_first">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_FeatureOrderAttr : EnumAttr<Dit_Dialect, Dit_FeatureOrder, "feature_order"> {
  let assemblyFormat = "$value";
}

def Dit_TextPosition : I32EnumAttr<"TextPosition",
    "where text tokens sit in a joint sequence", [
    I32EnumAttrCase<"Prefix", 0, "prefix">,
    I32EnumAttrCase<"Suffix", 1, "suffix">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_TextPositionAttr : EnumAttr<Dit_Dialect, Dit_TextPosition, "text_position"> {
  let assemblyFormat = "$value";
}

def Dit_RopeStyle : I32EnumAttr<"RopeStyle",
    "how a rotary embedding lays its frequencies over the channels", [
    // Each head's channels split into a frame, row and column range
    // (axes_dims), integer positions, frequencies theta^(-2k/dim)
    // (Wan, FLUX, HunyuanVideo, CogVideoX, Mochi).
    I32EnumAttrCase<"Axes", 0, "axes">,
    // LTX-Video: one table over every head's channels together; channel
    // pair j (after W mod 6 unrotated channels) turns with frequency
    // j / 3 on axis j mod 3, at fractional positions.
    I32EnumAttrCase<"Ltx", 1, "ltx">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_RopeStyleAttr : EnumAttr<Dit_Dialect, Dit_RopeStyle, "rope_style"> {
  let assemblyFormat = "$value";
}

def Dit_ActivationKind : I32EnumAttr<"ActivationKind", "MLP activation", [
    I32EnumAttrCase<"Gelu", 0, "gelu">,
    I32EnumAttrCase<"GeluTanh", 1, "gelu_tanh">,
    I32EnumAttrCase<"Silu", 2, "silu">,
    I32EnumAttrCase<"SwiGLU", 3, "swiglu">,
    I32EnumAttrCase<"GeGLU", 4, "geglu">,
    I32EnumAttrCase<"Relu", 5, "relu">,
    I32EnumAttrCase<"QuickGelu", 6, "quick_gelu">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_ActivationKindAttr : EnumAttr<Dit_Dialect, Dit_ActivationKind, "activation"> {
  let assemblyFormat = "$value";
}

def Dit_SchedulerKind : I32EnumAttr<"SchedulerKind", "denoising scheduler", [
    I32EnumAttrCase<"FlowMatchEuler", 0, "flow_match_euler">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_SchedulerKindAttr : EnumAttr<Dit_Dialect, Dit_SchedulerKind, "scheduler"> {
  let assemblyFormat = "$value";
}

def Dit_ComponentKind : I32EnumAttr<"ComponentKind", "pipeline component", [
    I32EnumAttrCase<"TextEncoder", 0, "text_encoder">,
    I32EnumAttrCase<"ImageEncoder", 1, "image_encoder">,
    I32EnumAttrCase<"VaeDecoder", 2, "vae_decoder">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_ComponentKindAttr : EnumAttr<Dit_Dialect, Dit_ComponentKind, "component_kind"> {
  let assemblyFormat = "$value";
}


//===----------------------------------------------------------------------===//
// Enums of the partitioner's hand-offs (the discardable attributes below)
//===----------------------------------------------------------------------===//

// The seven parallel axes, in the default layout order (outermost first).
// The same order as ditc::Axis, so the two convert by value.
def Dit_MeshAxis : I32EnumAttr<"MeshAxis", "parallel mesh axis", [
    I32EnumAttrCase<"DP", 0, "dp">,
    I32EnumAttrCase<"CFG", 1, "cfg">,
    I32EnumAttrCase<"PP", 2, "pp">,
    I32EnumAttrCase<"Ring", 3, "ring">,
    I32EnumAttrCase<"KVGather", 4, "kv_gather">,
    I32EnumAttrCase<"Ulysses", 5, "ulysses">,
    I32EnumAttrCase<"TP", 6, "tp">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}

def Dit_TPRole : I32EnumAttr<"TPRole", "tensor-parallel half of a linear", [
    I32EnumAttrCase<"Column", 0, "column">,
    I32EnumAttrCase<"Row", 1, "row">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_TPRoleAttr : EnumAttr<Dit_Dialect, Dit_TPRole, "tp_role"> {
  let summary = "Column- or row-parallel linear (`dit.tp`)";
  let assemblyFormat = "`<` $value `>`";
}

def Dit_AttentionRows : I32EnumAttr<"AttentionRows",
    "how attention reaches the key/value rows of other ranks", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Local", 1, "local">,
    I32EnumAttrCase<"Gather", 2, "gather">,
    I32EnumAttrCase<"Ring", 3, "ring">,
    I32EnumAttrCase<"KVGather", 4, "kv_gather">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}

def Dit_LatentLayout : I32EnumAttr<"LatentLayout",
    "layout the denoising latents keep between steps", [
    I32EnumAttrCase<"PatchTokens", 0, "patch_tokens">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_LatentLayoutAttr : EnumAttr<Dit_Dialect, Dit_LatentLayout, "latent_layout"> {
  let summary = "Latent layout between steps (`dit.latent_layout`)";
  let assemblyFormat = "`<` $value `>`";
}

// The part of the diffusion pipeline a function implements.
def Dit_PipelineComponent : I32EnumAttr<"PipelineComponent",
    "pipeline function kind", [
    I32EnumAttrCase<"TextEncoder", 0, "text_encoder">,
    I32EnumAttrCase<"Transformer", 1, "transformer">,
    I32EnumAttrCase<"Transformer2", 2, "transformer_2">,
    I32EnumAttrCase<"DenoiseStep", 3, "denoise_step">,
    I32EnumAttrCase<"Vae", 4, "vae">]> {
  let cppNamespace = "::mlir::dit";
  let genSpecializedAttr = 0;
}
def Dit_PipelineComponentAttr
    : EnumAttr<Dit_Dialect, Dit_PipelineComponent, "component"> {
  let summary = "Pipeline function kind (`dit.component`)";
  let assemblyFormat = "`<` $value `>`";
}

#endif // DIT_BASE_TD
