//===- VaeGraph.cpp - @vae_decode's decoder as a dit graph ----------------===//
//
// The decoders of AutoencoderKL (FLUX.1, SD3) and AutoencoderKLWan (Wan,
// and Qwen-Image's copy) op by op, as diffusers builds them, from the
// config ditc/Vae/DecoderConfig.h validates (the one dit-run decodes
// with). The graph is the whole decode at once: Wan's frame-by-frame decode
// with its feature cache computes the same causal convolutions. Each op
// names its module, and takes that name as its location.
//
//===----------------------------------------------------------------------===//
#include "VaeGraph.h"

#include "ditc/Support/BadInput.h"
#include "ditc/Support/Strings.h"
#include "ditc/Vae/DecoderConfig.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::dit;

namespace ditc {

namespace {

class VaeGraph {
public:
  VaeGraph(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value conv(Value x, const std::string &name, int64_t out,
             ArrayRef<int64_t> kernel, bool causal = false) {
    return ConvOp::create(b, at(name), withChannels(x, out), x, b.getStringAttr(name),
                          b.getDenseI64ArrayAttr(kernel), causal ? b.getUnitAttr() : UnitAttr(),
                          /*halo=*/DenseI64ArrayAttr());
  }
  Value groupNorm(Value x, const std::string &name, int64_t groups) {
    return GroupNormOp::create(b, at(name), x.getType(), x, b.getI64IntegerAttr(groups),
                               b.getF64FloatAttr(vae::kAutoencoderKLGroupNormEps),
                               b.getStringAttr(name));
  }
  Value rmsNorm(Value x, const std::string &name, bool imageGamma = false) {
    return ChannelRMSNormOp::create(b, at(name), x.getType(), x, b.getStringAttr(name),
                                    imageGamma ? b.getUnitAttr() : UnitAttr());
  }
  Value silu(Value x) {
    return ActivationOp::create(b, loc, x.getType(),
                                ActivationKindAttr::get(b.getContext(), ActivationKind::Silu), x);
  }
  Value add(Value x, Value y) { return AddOp::create(b, loc, x.getType(), x, y); }
  Value upsample(Value x) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[shape.size() - 2] *= 2;
    shape.back() *= 2;
    return UpsampleOp::create(b, loc, type.clone(shape), x);
  }
  Value temporalUpsample(Value x, const std::string &name) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[2] = 1 + 2 * (shape[2] - 1);
    return TemporalUpsampleOp::create(b, at(name), type.clone(shape), x, b.getStringAttr(name));
  }
  Value dupUp(Value x, int64_t out, bool temporal) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[1] = out;
    if (temporal)
      shape[2] = 1 + 2 * (shape[2] - 1);
    shape[3] *= 2;
    shape[4] *= 2;
    return DupUpOp::create(b, loc, type.clone(shape), x,
                           temporal ? b.getUnitAttr() : UnitAttr());
  }
  Value attention(Value x, const std::string &name, QKVLayout layout) {
    return ImageAttentionOp::create(b, at(name), x.getType(), x, b.getStringAttr(name),
                                    QKVLayoutAttr::get(b.getContext(), layout));
  }

  OpBuilder &b;
  Location loc;

private:
  Location at(const std::string &name) { return NameLoc::get(b.getStringAttr(name)); }
  static RankedTensorType withChannels(Value x, int64_t channels) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[1] = channels;
    return type.clone(shape);
  }
};

/// The latents must carry the decoder's latent channels in the layout it
/// reads: [B, C, H, W] for images, [B, C, F, H, W] for videos.
void checkLatents(Value latents, int64_t channels, int64_t rank, const std::string &path,
                  const char *field) {
  auto type = cast<RankedTensorType>(latents.getType());
  if (type.getRank() != rank || type.getDimSize(1) != channels)
    badFile(path, std::string(field) + " gives " + std::to_string(channels) +
                      " latent channels, but the transformer's latents are " +
                      std::to_string(type.getRank() == rank ? type.getDimSize(1) : -1) +
                      " channels of rank " + std::to_string(type.getRank()) +
                      ": this VAE does not decode this model's latents");
}

Value autoencoderKL(VaeGraph &g, Value z, const vae::AutoencoderKLConfig &config) {
  checkLatents(z, config.latentChannels, 4, config.path, "latent_channels");
  OpBuilder &b = g.b;
  int64_t groups = config.normGroups;
  Value x = DenormalizeLatentsOp::create(b, g.loc, z.getType(), z,
                                         b.getDenseF64ArrayAttr({1.0 / config.scalingFactor}),
                                         b.getDenseF64ArrayAttr({config.shiftFactor}));
  auto resnet = [&](const std::string &name, Value in, int64_t out) {
    int64_t channels = cast<RankedTensorType>(in.getType()).getDimSize(1);
    Value h = g.conv(g.silu(g.groupNorm(in, name + ".norm1", groups)), name + ".conv1", out, {3, 3});
    h = g.conv(g.silu(g.groupNorm(h, name + ".norm2", groups)), name + ".conv2", out, {3, 3});
    Value shortcut = channels == out ? in : g.conv(in, name + ".conv_shortcut", out, {1, 1});
    return g.add(shortcut, h);
  };
  if (config.postQuantConv)
    x = g.conv(x, "post_quant_conv", config.latentChannels, {1, 1});
  int64_t widest = config.blockOutChannels.back();
  x = g.conv(x, "decoder.conv_in", widest, {3, 3});
  x = resnet("decoder.mid_block.resnets.0", x, widest);
  if (config.midBlockAttention) {
    std::string name = "decoder.mid_block.attentions.0";
    Value h = g.groupNorm(x, name + ".group_norm", groups);
    x = g.add(x, g.attention(h, name, QKVLayout::Separate));
  }
  x = resnet("decoder.mid_block.resnets.1", x, widest);
  size_t blocks = config.blockOutChannels.size();
  for (size_t i = 0; i < blocks; ++i) {
    int64_t out = config.upBlockChannels(i).second;
    std::string block = "decoder.up_blocks." + std::to_string(i);
    for (int64_t j = 0; j <= config.layersPerBlock; ++j)
      x = resnet(block + ".resnets." + std::to_string(j), x, out);
    if (i + 1 < blocks)
      x = g.conv(g.upsample(x), block + ".upsamplers.0.conv", out, {3, 3});
  }
  x = g.silu(g.groupNorm(x, "decoder.conv_norm_out", groups));
  return g.conv(x, "decoder.conv_out", config.outChannels, {3, 3});
}

Value wan(VaeGraph &g, Value z, const vae::WanVaeConfig &config) {
  OpBuilder &b = g.b;
  // Qwen-Image's latents are images: its video VAE decodes them as one
  // frame, and the pipeline drops the frame axis of the pixels.
  auto latents = cast<RankedTensorType>(z.getType());
  bool image = latents.getRank() == 4;
  SmallVector<ReassociationIndices> frameAxis{{0}, {1, 2}, {3}, {4}};
  if (image) {
    auto shape = latents.getShape();
    z = tensor::ExpandShapeOp::create(
        b, g.loc, latents.clone({shape[0], shape[1], 1, shape[2], shape[3]}), z, frameAxis);
  }
  checkLatents(z, config.zDim, 5, config.path, "z_dim");
  Value x = DenormalizeLatentsOp::create(b, g.loc, z.getType(), z,
                                         b.getDenseF64ArrayAttr(config.latentsStd),
                                         b.getDenseF64ArrayAttr(config.latentsMean));
  auto causal = [&](Value in, const std::string &name, int64_t out) {
    return g.conv(in, name, out, {3, 3, 3}, /*causal=*/true);
  };
  auto resnet = [&](const std::string &name, Value in, int64_t out) {
    int64_t channels = cast<RankedTensorType>(in.getType()).getDimSize(1);
    Value h = causal(g.silu(g.rmsNorm(in, name + ".norm1")), name + ".conv1", out);
    h = causal(g.silu(g.rmsNorm(h, name + ".norm2")), name + ".conv2", out);
    Value shortcut = channels == out ? in : g.conv(in, name + ".conv_shortcut", out, {1, 1, 1});
    return g.add(shortcut, h);
  };
  std::vector<vae::WanUpBlock> blocks = vae::wanUpBlocks(config);
  int64_t widest = blocks.front().in;
  x = g.conv(x, "post_quant_conv", config.zDim, {1, 1, 1});
  x = causal(x, "decoder.conv_in", widest);
  x = resnet("decoder.mid_block.resnets.0", x, widest);
  {
    std::string name = "decoder.mid_block.attentions.0";
    Value h = g.rmsNorm(x, name + ".norm", /*imageGamma=*/true);
    x = g.add(x, g.attention(h, name, QKVLayout::Stacked));
  }
  x = resnet("decoder.mid_block.resnets.1", x, widest);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const vae::WanUpBlock &block = blocks[i];
    std::string name = "decoder.up_blocks." + std::to_string(i);
    Value blockInput = x;
    for (int64_t j = 0; j <= config.numResBlocks; ++j)
      x = resnet(name + ".resnets." + std::to_string(j), x, block.out);
    if (!block.upsamples)
      continue;
    std::string up = vae::wanUpsamplerName(config, i);
    if (block.temporal)
      x = g.temporalUpsample(x, up + ".time_conv");
    x = g.conv(g.upsample(x), up + ".resample.1", block.resampleOut, {3, 3});
    // Wan 2.2's residual blocks add their input spread over the new
    // pixels (and frames) by DupUp3D.
    if (config.residual)
      x = g.add(x, g.dupUp(blockInput, block.out, block.temporal));
  }
  x = g.silu(g.rmsNorm(x, "decoder.norm_out"));
  x = causal(x, "decoder.conv_out", config.convOutChannels);
  if (config.patchSize > 1) {
    auto type = cast<RankedTensorType>(x.getType());
    SmallVector<int64_t> shape(type.getShape());
    int64_t p = config.patchSize;
    shape[1] /= p * p;
    shape[3] *= p;
    shape[4] *= p;
    x = PixelUnpatchifyOp::create(b, g.loc, type.clone(shape), x, b.getI64IntegerAttr(p));
  }
  // AutoencoderKLWan._decode clamps the pixels to [-1, 1].
  x = ClampOp::create(b, g.loc, x.getType(), x, b.getF64FloatAttr(-1.0),
                      b.getF64FloatAttr(1.0));
  if (image)
    x = tensor::CollapseShapeOp::create(b, g.loc, x, frameAxis);
  return x;
}

} // namespace

bool isModeledVaeClass(const std::string &vaeClass) {
  return vaeClass == "AutoencoderKL" || vaeClass == "AutoencoderKLWan" ||
         vaeClass == "AutoencoderKLQwenImage";
}

void buildVaeDecoderBody(OpBuilder &b, ComponentOp decoder, const ModelSpec &spec) {
  nlohmann::json config = nlohmann::json::parse(spec.vaeConfig);
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&decoder.getBody(), {}, decoder.getInputs().getTypes(),
                              SmallVector<Location>(decoder.getInputs().size(), decoder.getLoc()));
  VaeGraph g(b, NameLoc::get(b.getStringAttr("vae")));
  Value latents = body->getArgument(0);
  Value pixels;
  if (spec.vaeClass == "AutoencoderKL")
    pixels = autoencoderKL(g, latents, vae::parseAutoencoderKLConfig(config, spec.vaeConfigPath));
  else
    pixels = wan(g, latents, vae::parseWanVaeConfig(config, spec.vaeConfigPath));
  auto want = cast<RankedTensorType>(decoder.getOutputs()[0].getType());
  auto got = cast<RankedTensorType>(pixels.getType());
  if (got != want)
    badFile(spec.vaeConfigPath,
            "decodes the latents to " + bracketedList(got.getShape()) + " pixels, but the model's "
            "pipeline makes " + bracketedList(want.getShape()) +
            " (the VAE's compression or output channels differ from the model's)");
  YieldOp::create(b, decoder.getLoc(), ValueRange{pixels});
}

} // namespace ditc
