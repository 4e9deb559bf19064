//===- VaeDecodeGroup.cpp - bands of a VAE decode over c10d groups ------===//
#include "ditc/Runtime/Driver/VaeDecodeGroup.h"
#include "ditc/Runtime/Comm/ProcessGroups.h"
#include "ditc/Runtime/Comm/Rendezvous.h"
#include "ditc/Runtime/Plan/Manifest.h"

#include <algorithm>
#include <string>

namespace ditc::runtime {

namespace {

// Point-to-point tags of the band exchanges: rows going up the image, rows
// going down, and the leader's transfers (the output group uses 2).
constexpr int kRowsUpTag = 20, kRowsDownTag = 21, kTransferTag = 22;

[[noreturn]] void failed(const std::string &what, const Group &group,
                         const std::exception &error) {
  throw RunFailure(what + " over the VAE's ranks " + formatShape(group.members) +
                   " (group " + group.key + ") failed: " + error.what());
}

/// Bands whose exchanges run over one c10d group, member b holding band b,
/// each exchange first checked against the plan's band program.
class GroupBands : public Bands {
public:
  GroupBands(Group &group, std::vector<int64_t> rows, const BandProgram &program)
      : group(group), rows(std::move(rows)), program(program) {}

  /// The exchanges issued since the last call, which must be whole passes
  /// of the band program.
  void finishDecode() {
    size_t length = program.exchanges.size();
    size_t issued = this->issued;
    this->issued = 0;
    if (length > 0 && (issued == 0 || issued % length != 0))
      throw RunFailure("the VAE decode issued " + std::to_string(issued) +
                       " band exchanges, not whole passes of the " + std::to_string(length) +
                       " that the plan's band program lists (" + program.plan +
                       ": vae.exchanges)");
  }

  int64_t count() const override { return int64_t(group.members.size()); }
  int64_t index() const override { return group.index; }
  const std::vector<int64_t> &latentRows() const override { return rows; }

  at::Tensor withHalo(const at::Tensor &x, int64_t halo) override {
    expect({"update_halo", halo});
    int64_t i = index(), n = count(), height = x.size(-2);
    std::vector<int64_t> edgeShape = x.sizes().vec();
    edgeShape[edgeShape.size() - 2] = halo;
    auto options = x.options();
    at::Tensor above = at::zeros(edgeShape, options), below = at::zeros(edgeShape, options);
    at::Tensor firstRows, lastRows;
    std::vector<Wait> waits;
    try {
      // Every transfer is posted before any is waited for: band i sends
      // to i - 1 and i + 1 while they send to it.
      if (i > 0) {
        firstRows = x.narrow(-2, 0, halo).contiguous();
        waits.push_back(group.send(firstRows, i - 1, kRowsUpTag));
        waits.push_back(group.recv(above, i - 1, kRowsDownTag));
      }
      if (i + 1 < n) {
        lastRows = x.narrow(-2, height - halo, halo).contiguous();
        waits.push_back(group.send(lastRows, i + 1, kRowsDownTag));
        waits.push_back(group.recv(below, i + 1, kRowsUpTag));
      }
      for (Wait &wait : waits)
        wait();
    } catch (const std::exception &error) {
      failed("exchanging " + std::to_string(halo) + "-row halos", group, error);
    }
    return at::cat({above, x, below}, -2);
  }

  at::Tensor allReduceSum(const at::Tensor &x) override {
    expect({"all_reduce_stats", 0});
    at::Tensor sum = x.contiguous().clone();
    try {
      group.allreduce(sum)();
    } catch (const std::exception &error) {
      failed("all-reducing GroupNorm sums", group, error);
    }
    return sum;
  }

  std::pair<at::Tensor, at::Tensor> gatherKeysValues(const at::Tensor &keys,
                                                     const at::Tensor &values,
                                                     const std::vector<int64_t> &pixels) override {
    expect({"all_gather_kv", 0});
    // K and V side by side in one all-gather; c10d's all_gather takes
    // equal shapes, so every band pads its pixels to the largest band's.
    int64_t channels = keys.size(2);
    int64_t largest = *std::max_element(pixels.begin(), pixels.end());
    at::Tensor mine = at::zeros({keys.size(0), largest, 2 * channels}, keys.options());
    mine.narrow(1, 0, keys.size(1)).narrow(2, 0, channels).copy_(keys);
    mine.narrow(1, 0, values.size(1)).narrow(2, channels, channels).copy_(values);
    std::vector<at::Tensor> all;
    for (int64_t b = 0; b < count(); ++b)
      all.push_back(at::empty_like(mine));
    try {
      group.allgather(all, mine);
    } catch (const std::exception &error) {
      failed("all-gathering attention K/V", group, error);
    }
    for (int64_t b = 0; b < count(); ++b)
      all[size_t(b)] = all[size_t(b)].narrow(1, 0, pixels[size_t(b)]);
    at::Tensor joined = at::cat(all, 1);
    return {joined.narrow(2, 0, channels), joined.narrow(2, channels, channels)};
  }

private:
  /// Every band runs the same decoder on the same plan, so a decoder that
  /// strays from the band program strays on all of them at this call:
  /// they stop together, before the exchange, instead of hanging.
  void expect(const BandExchange &call) {
    const std::vector<BandExchange> &planned = program.exchanges;
    if (planned.empty())
      return;
    size_t at = issued % planned.size();
    if (planned[at] != call)
      throw RunFailure("the VAE decoder issues " + call.describe() + " as band exchange #" +
                       std::to_string(issued) + ", where the plan's band program (" +
                       program.plan + ": vae.exchanges[" + std::to_string(at) + "]) has " +
                       planned[at].describe() +
                       ": this dit-run's decoder is not the program ditc verified");
    ++issued;
  }

  Group &group;
  std::vector<int64_t> rows;
  const BandProgram &program;
  size_t issued = 0;
};

} // namespace

VaeDecodeGroup::VaeDecodeGroup(int64_t rank, int64_t leader, std::vector<int64_t> decoders,
                               std::vector<int64_t> latentRows, Group *bandGroup,
                               Group *transferGroup, BandProgram program)
    : rank(rank), leader(leader), decoders(std::move(decoders)),
      latentRows(std::move(latentRows)), transferGroup(transferGroup),
      program(std::move(program)) {
  if (bandGroup)
    exchange = std::make_unique<GroupBands>(*bandGroup, this->latentRows, this->program);
}

void VaeDecodeGroup::finishDecode() {
  if (exchange)
    static_cast<GroupBands &>(*exchange).finishDecode();
}

VaeDecodeGroup::~VaeDecodeGroup() = default;

bool VaeDecodeGroup::decodes() const {
  return std::count(decoders.begin(), decoders.end(), rank) > 0;
}

Bands *VaeDecodeGroup::bands() { return exchange.get(); }

int64_t VaeDecodeGroup::transferIndex(int64_t member) const {
  const std::vector<int64_t> &members = transferGroup->members;
  return std::find(members.begin(), members.end(), member) - members.begin();
}

at::Tensor VaeDecodeGroup::scatterLatents(const at::Tensor &latents,
                                          const std::vector<int64_t> &shape) {
  if (decoders.size() == 1 && decoders.front() == leader)
    return latents;
  int64_t rowDim = int64_t(shape.size()) - 2;
  at::Tensor mine;
  try {
    int64_t first = 0;
    for (size_t b = 0; b < decoders.size(); ++b) {
      int64_t rows = latentRows[b];
      if (rank == leader) {
        at::Tensor band = latents.narrow(rowDim, first, rows).contiguous();
        if (decoders[b] == leader)
          mine = band;
        else
          transferGroup->send(band, transferIndex(decoders[b]), kTransferTag)();
      } else if (decoders[b] == rank) {
        std::vector<int64_t> bandShape = shape;
        bandShape[size_t(rowDim)] = rows;
        mine = at::empty(bandShape, at::kFloat);
        transferGroup->recv(mine, transferIndex(leader), kTransferTag)();
      }
      first += rows;
    }
  } catch (const std::exception &error) {
    failed("sending the latents' row bands from rank " + std::to_string(leader),
           *transferGroup, error);
  }
  return mine;
}

at::Tensor VaeDecodeGroup::gatherPixels(const at::Tensor &pixels,
                                        const std::vector<int64_t> &shape) {
  if (decoders.size() == 1 && decoders.front() == leader)
    return pixels;
  // A band's pixel rows are its latent rows times the compression.
  int64_t allRows = 0;
  for (int64_t rows : latentRows)
    allRows += rows;
  int64_t pixelRowsPerLatentRow = shape[shape.size() - 2] / allRows;
  std::vector<at::Tensor> bands;
  try {
    for (size_t b = 0; b < decoders.size(); ++b) {
      if (rank == leader) {
        if (decoders[b] == leader) {
          bands.push_back(pixels);
          continue;
        }
        std::vector<int64_t> bandShape = shape;
        bandShape[shape.size() - 2] = pixelRowsPerLatentRow * latentRows[b];
        at::Tensor band = at::empty(bandShape, at::kFloat);
        transferGroup->recv(band, transferIndex(decoders[b]), kTransferTag)();
        bands.push_back(band);
      } else if (decoders[b] == rank) {
        at::Tensor mine = pixels.contiguous();
        transferGroup->send(mine, transferIndex(leader), kTransferTag)();
      }
    }
  } catch (const std::exception &error) {
    failed("gathering the pixel bands on rank " + std::to_string(leader), *transferGroup,
           error);
  }
  return rank == leader ? at::cat(bands, -2) : at::Tensor();
}

} // namespace ditc::runtime
