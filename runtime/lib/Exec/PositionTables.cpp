//===- PositionTables.cpp - rotary and sinusoidal position tables ---------===//
#include "ditc/Runtime/Exec/PositionTables.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ditc::runtime {

RopeTable learnedRopeTable(const OpAttrs &a, const at::Tensor &frequencies, int64_t seq,
                           int64_t heads, int64_t d, int64_t latentBlock,
                           at::TensorOptions options) {
  // Learned per-head frequencies W [3, heads, d/2] (Mochi): pair f of
  // head h turns by sum_a position[a] * W[a, h, f]; text rows stay.
  int64_t text = a.textTokens, image = seq - text;
  int64_t first = latentBlock * image;
  int64_t gh = a.grid[1], gw = a.grid[2], half = d / 2;
  at::Tensor w = frequencies.to(at::kDouble).cpu().contiguous();
  const double *freq = w.data_ptr<double>();
  std::vector<double> cosTable(seq * heads * d, 1.0), sinTable(seq * heads * d, 0.0);
  std::vector<int64_t> partner(d);
  for (int64_t c = 0; c < d; ++c)
    partner[c] = c ^ 1;
  for (int64_t s = 0; s < image; ++s) {
    int64_t token = first + s;
    int64_t coord[3] = {token / (gh * gw), (token / gw) % gh, token % gw};
    double position[3];
    for (int axis = 0; axis < 3; ++axis)
      position[axis] = a.gridOffset[axis] + a.gridStep[axis] * double(coord[axis]);
    int64_t row = a.textPrefix ? text + s : s;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t f = 0; f < half; ++f) {
        double angle = 0;
        for (int axis = 0; axis < 3; ++axis)
          angle += position[axis] * freq[(axis * heads + h) * half + f];
        int64_t at = (row * heads + h) * d + 2 * f;
        cosTable[at] = cosTable[at + 1] = std::cos(angle);
        sinTable[at] = -std::sin(angle);
        sinTable[at + 1] = std::sin(angle);
      }
  }
  auto doubles = at::TensorOptions(at::kDouble);
  RopeTable table;
  table.cos = at::from_blob(cosTable.data(), {seq, heads, d}, doubles).to(options);
  table.sin = at::from_blob(sinTable.data(), {seq, heads, d}, doubles).to(options);
  table.partner = at::from_blob(partner.data(), {d}, at::TensorOptions(at::kLong))
                      .clone()
                      .to(options.device());
  return table;
}

RopeTable rotaryTable(const OpAttrs &a, int64_t seq, int64_t width, int64_t d,
                      int64_t latentBlock, int64_t tpCoordinate,
                      at::TensorOptions options) {
  // cos/sin per (token, channel) and each channel's partner in its pair;
  // text rows sit at position 0, image rows at their grid coordinates
  // (offset by this rank's latent block when the sequence is split).
  int64_t text = a.textTokens;
  bool prefix = a.textPrefix;
  int64_t image = seq - text;
  const auto &grid = a.grid;
  const auto &axesDims = a.axesDims;
  double theta = a.theta;
  int64_t first = latentBlock * image;
  // The rotated channel pairs (even, even + 1) of this rank's channels,
  // each with its axis and frequency; channels in no pair stay unrotated.
  struct Pair {
    int64_t even;
    int axis;
    double freq;
    int64_t ltxFrequency = -1; // LTX: index into ltxFrequencies
  };
  std::vector<Pair> pairs;
  std::vector<int64_t> partner(d);
  for (int64_t c = 0; c < d; ++c)
    partner[c] = c;
  auto addPair = [&](int64_t even, int axis, double freq, int64_t ltxFrequency = -1) {
    pairs.push_back({even, axis, freq, ltxFrequency});
    partner[even] = even + 1;
    partner[even + 1] = even;
  };
  // LTX-Video's table is float32 in diffusers (LTXVideoRotaryPosEmbed
  // "always computes rope in fp32"), and its angles reach (pi / 2) theta,
  // where float32 rounds them: a float64 table was 2.3e-5 from diffusers
  // after three steps. So its frequencies, positions, angles, cos and sin
  // are taken with the same float32 ATen ops, in the same order.
  std::vector<float> ltxFrequencies;
  if (a.ropeLtx) {
    // One table over all heads (W channels); this rank holds tp block
    // `first / width` of them. After W mod 6 unrotated channels, pair j
    // turns on axis j mod 3 with frequency (pi / 2) theta^(i / (n - 1)),
    // i = j / 3 of n = W / 6 (diffusers' linspace of log-frequencies).
    int64_t full = width * a.headShards;
    int64_t firstChannel = tpCoordinate * width;
    int64_t pad = full % 6, n = full / 6;
    // theta ** linspace(log_theta 1, log_theta theta, n), * pi / 2.
    at::Tensor frequencies =
        at::pow(at::Scalar(theta), at::linspace(0.0, 1.0, n, at::TensorOptions(at::kFloat))) *
        M_PI / 2.0;
    ltxFrequencies.assign(frequencies.data_ptr<float>(), frequencies.data_ptr<float>() + n);
    for (int64_t c = 0; c + 1 < width; c += 2) {
      int64_t g = firstChannel + c;
      if (g < pad)
        continue;
      int64_t j = (g - pad) / 2;
      addPair(c, int(j % 3), 0.0, j / 3);
    }
  } else {
    for (int axis = 0, offset = 0; axis < 3; offset += int(axesDims[axis]), ++axis) {
      int64_t dim = int64_t(axesDims[axis]);
      for (int64_t k = 0; k < dim / 2 && offset + 2 * k + 1 < d; ++k)
        addPair(offset + 2 * k, axis,
                std::pow(theta, -double(k) * 2.0 / double(dim)));
    }
  }
  // The position an angle multiplies: gridOffset + gridStep * index (the
  // grid index unless CogVideoX 1.0 crops its rotary grid). LTX's are its
  // own (ltxPositions below).
  auto position = [&](int axis, int64_t index) {
    return a.gridOffset[axis] + a.gridStep[axis] * double(index);
  };
  std::vector<double> cosTable(seq * d, 1.0), sinTable(seq * d, 0.0);
  int64_t gh = int64_t(grid[1]), gw = int64_t(grid[2]);
  // LTX: the float32 positions 2 (index * scale) - 1 of each axis (the
  // fractional position mapped to [-1, 1)), and the angles gathered for one
  // float32 cos and sin after the walk.
  std::vector<std::vector<float>> ltxPositions(3);
  if (a.ropeLtx)
    for (int axis = 0; axis < 3; ++axis) {
      at::Tensor p = at::arange(int64_t(grid[axis]), at::TensorOptions(at::kFloat)) *
                         a.coordinateScale[axis] * 2 - 1;
      ltxPositions[axis].assign(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
    }
  std::vector<float> ltxAngles;
  std::vector<int64_t> ltxSlots; // row * d + even channel of each angle
  auto turn = [&](int64_t row, const int64_t coord[3]) {
    for (const Pair &pair : pairs) {
      if (pair.ltxFrequency >= 0) {
        ltxAngles.push_back(ltxFrequencies[pair.ltxFrequency] *
                            ltxPositions[pair.axis][coord[pair.axis]]);
        ltxSlots.push_back(row * d + pair.even);
        continue;
      }
      double angle = position(pair.axis, coord[pair.axis]) * pair.freq;
      double *cosRow = &cosTable[row * d], *sinRow = &sinTable[row * d];
      cosRow[pair.even] = cosRow[pair.even + 1] = std::cos(angle);
      sinRow[pair.even] = -std::sin(angle);
      sinRow[pair.even + 1] = std::sin(angle);
    }
  };
  // Qwen-Image's centred rows and columns (QwenEmbedRope, scale_rope).
  int64_t rowShift = a.centered ? gh - gh / 2 : 0;
  int64_t colShift = a.centered ? gw - gw / 2 : 0;
  for (int64_t s = 0; s < image; ++s) {
    int64_t token = first + s;
    int64_t coord[3] = {token / (gh * gw), (token / gw) % gh - rowShift,
                        token % gw - colShift};
    turn(prefix ? text + s : s, coord);
  }
  // Its text follows the image on every axis: token j at max(H/2, W/2) + j.
  // Elsewhere text sits at position zero, which the table's
  // initial values (cos 1, sin 0) already hold.
  if (a.centered)
    for (int64_t j = 0; j < text; ++j) {
      int64_t at = std::max(gh / 2, gw / 2) + j;
      int64_t coord[3] = {at, at, at};
      turn(prefix ? j : image + j, coord);
    }
  if (!ltxAngles.empty()) {
    at::Tensor angles = at::from_blob(ltxAngles.data(), {int64_t(ltxAngles.size())},
                                      at::TensorOptions(at::kFloat));
    at::Tensor cos = angles.cos(), sin = angles.sin();
    const float *c = cos.data_ptr<float>(), *s = sin.data_ptr<float>();
    for (size_t i = 0; i < ltxSlots.size(); ++i) {
      int64_t slot = ltxSlots[i];
      cosTable[slot] = cosTable[slot + 1] = c[i];
      sinTable[slot] = -s[i];
      sinTable[slot + 1] = s[i];
    }
  }
  auto doubles = at::TensorOptions(at::kDouble);
  RopeTable table;
  table.cos = at::from_blob(cosTable.data(), {seq, 1, d}, doubles).to(options);
  table.sin = at::from_blob(sinTable.data(), {seq, 1, d}, doubles).to(options);
  table.partner = at::from_blob(partner.data(), {d}, at::TensorOptions(at::kLong))
                      .clone()
                      .to(options.device());
  return table;
}

at::Tensor sincosPositionTable(const OpAttrs &a, int64_t image, int64_t width,
                               int64_t latentBlock, at::TensorOptions options) {
  // The embedding of this rank's block of the grid, in float64 and then
  // cast once: [frame part D/4 | column part 3D/8 | row part 3D/8], each
  // part [sin(p w_j) | cos(p w_j)] with w_j = 10000^(-j / half).
    int64_t first = latentBlock * image;
  int64_t gh = a.grid[1], gw = a.grid[2];
  std::vector<double> table(image * width);
  auto part = [](double *out, int64_t n, double position) {
    int64_t half = n / 2;
    for (int64_t j = 0; j < half; ++j) {
      double angle = position * std::pow(10000.0, -double(j) / double(half));
      out[j] = std::sin(angle);
      out[half + j] = std::cos(angle);
    }
  };
  int64_t temporal = width / 4, spatial = (3 * width / 4) / 2;
  for (int64_t s = 0; s < image; ++s) {
    int64_t token = first + s;
    double *row = &table[s * width];
    part(row, temporal, double(token / (gh * gw)) / a.temporalScale);
    part(row + temporal, spatial, double(token % gw) / a.spatialScale);
    part(row + temporal + spatial, spatial,
         double((token / gw) % gh) / a.spatialScale);
  }
  return at::from_blob(table.data(), {image, width}, at::TensorOptions(at::kDouble))
      .to(options);
}

} // namespace ditc::runtime
