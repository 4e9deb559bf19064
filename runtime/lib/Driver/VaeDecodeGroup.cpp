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

/// Bands whose exchanges run over one c10d group, member b holding band b.
class GroupBands : public Bands {
public:
  GroupBands(Group &group, std::vector<int64_t> rows) : group(group), rows(std::move(rows)) {}

  int64_t count() const override { return int64_t(group.members.size()); }
  int64_t index() const override { return group.index; }
  const std::vector<int64_t> &latentRows() const override { return rows; }

  at::Tensor withHalo(const at::Tensor &x, int64_t halo) override {
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
    at::Tensor sum = x.contiguous().clone();
    try {
      group.allreduce(sum)();
    } catch (const std::exception &error) {
      failed("all-reducing GroupNorm sums", group, error);
    }
    return sum;
  }

  at::Tensor allGather(const at::Tensor &x, int64_t dim,
                       const std::vector<int64_t> &sizes) override {
    // c10d's all_gather takes equal shapes: every band pads to the largest.
    int64_t largest = *std::max_element(sizes.begin(), sizes.end());
    std::vector<int64_t> padded = x.sizes().vec();
    padded[size_t(dim)] = largest;
    at::Tensor mine = at::zeros(padded, x.options());
    mine.narrow(dim, 0, x.size(dim)).copy_(x);
    std::vector<at::Tensor> all;
    for (int64_t b = 0; b < count(); ++b)
      all.push_back(at::empty(padded, x.options()));
    try {
      group.allgather(all, mine);
    } catch (const std::exception &error) {
      failed("all-gathering attention K/V", group, error);
    }
    for (int64_t b = 0; b < count(); ++b)
      all[size_t(b)] = all[size_t(b)].narrow(dim, 0, sizes[size_t(b)]);
    return at::cat(all, dim);
  }

private:
  Group &group;
  std::vector<int64_t> rows;
};

} // namespace

VaeDecodeGroup::VaeDecodeGroup(int64_t rank, int64_t leader, std::vector<int64_t> decoders,
                               std::vector<int64_t> latentRows, Group *bandGroup,
                               Group *transferGroup)
    : rank(rank), leader(leader), decoders(std::move(decoders)),
      latentRows(std::move(latentRows)), transferGroup(transferGroup) {
  if (bandGroup)
    exchange = std::make_unique<GroupBands>(*bandGroup, this->latentRows);
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
