//===- RankLayout.cpp - where a plan's ranks sit, as SVG, text or JSON ----===//
//
// Everything here works from the manifest's JSON, so `ditc compile` and
// `ditc explain` draw the same layout from the same data.
//
//===----------------------------------------------------------------------===//
#include "ditc/Plan/RankLayout.h"
#include "ditc/Analysis/Deployment.h"
#include "ditc/Support/Utf8.h"

#include <algorithm>
#include <cstdio>
#include <set>

using nlohmann::json;

namespace ditc {

namespace {

constexpr int64_t kMaxRanks = int64_t(1) << 20;

/// Text made safe for an XML attribute or element: the five markup
/// characters as entities, and control characters (not allowed in XML 1.0)
/// as '?'.
std::string xmlEscape(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n')
        out += '?';
      else
        out += c;
    }
  }
  return out;
}

/// A group for a tooltip: whole up to 8 members, else its ends and size.
std::string shortListText(const std::vector<int64_t> &group) {
  if (group.size() <= 8)
    return rankList(group);
  return "[" + std::to_string(group.front()) + ", " + std::to_string(group[1]) +
         ", ..., " + std::to_string(group.back()) + "] (" +
         std::to_string(group.size()) + " ranks)";
}

/// The nodes a group's members sit on, ascending.
std::vector<int64_t> nodesOf(const RankLayout &layout,
                             const std::vector<int64_t> &group) {
  std::set<int64_t> nodes;
  for (int64_t rank : group)
    nodes.insert(layout.nodeOf(rank));
  return {nodes.begin(), nodes.end()};
}

/// Indices of the axes of size > 1, the ones worth showing.
std::vector<size_t> splitAxes(const RankLayout &layout) {
  std::vector<size_t> out;
  for (size_t a = 0; a < layout.axes.size(); ++a)
    if (layout.axes[a].size > 1)
      out.push_back(a);
  return out;
}

/// "cfg1 tp0": the rank's coordinates on the axes of size > 1.
std::string coordLabel(const RankLayout &layout, int64_t rank) {
  if (layout.servedReplica[size_t(rank)] >= 0)
    return "for dp" + std::to_string(layout.servedReplica[size_t(rank)]);
  std::string out;
  for (size_t a : splitAxes(layout))
    out += (out.empty() ? "" : " ") + layout.axes[a].name +
           std::to_string(layout.coords[rank][a]);
  return out;
}

/// A colour per axis name; red is kept for crossing nodes.
const char *axisColour(const std::string &name) {
  static const std::pair<const char *, const char *> colours[] = {
      {"dp", "#8c564b"},   {"cfg", "#9467bd"},       {"pp", "#2ca02c"},
      {"ring", "#ff7f0e"}, {"kv_gather", "#17becf"}, {"ulysses", "#1f77b4"},
      {"tp", "#e377c2"}};
  for (auto [axis, colour] : colours)
    if (name == axis)
      return colour;
  return "#7f7f7f";
}

const char *kCrossColour = "#d62728";

std::string headline(const RankLayout &layout) {
  std::string out = layout.model.empty() ? "plan" : layout.model;
  out += ": " + std::to_string(layout.numGpus) + " rank" +
         (layout.numGpus == 1 ? "" : "s") + " on " +
         std::to_string(layout.nnodes) + " node" +
         (layout.nnodes == 1 ? "" : "s") + " x " +
         std::to_string(layout.gpusPerNode) + " GPU" +
         (layout.gpusPerNode == 1 ? "" : "s");
  return out;
}

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  return buffer;
}

} // namespace

bool RankLayout::crossesNodes(const std::vector<int64_t> &group) const {
  for (int64_t rank : group)
    if (nodeOf(rank) != nodeOf(group.front()))
      return true;
  return false;
}

RankLayout readRankLayout(const JsonObject &manifest) {
  RankLayout layout;
  if (auto model = manifest.raw().find("model");
      model != manifest.raw().end() && model->is_object()) {
    JsonObject modelObject = manifest.getObject("model");
    layout.model =
        escapeInvalidUtf8(modelObject.getOptionalString("name").value_or(""));
  }
  JsonObject mesh = manifest.getObject("mesh");
  layout.numGpus = mesh.getInt("num_gpus", 1, kMaxRanks);
  const int64_t n = layout.numGpus;

  const json &axes = mesh.raw().contains("axes") ? mesh.raw()["axes"] : json();
  if (!axes.is_array() || axes.empty())
    mesh.failAt("axes", mesh.raw().contains("axes") ? &axes : nullptr,
                "is " + describeJson(axes) +
                    ", expected a non-empty list of {\"name\", \"size\"}");
  for (size_t i = 0; i < axes.size(); ++i) {
    std::string where = "axes[" + std::to_string(i) + "]";
    if (!axes[i].is_object())
      mesh.failAt(where, &axes[i],
                  "is " + describeJson(axes[i]) + ", expected an object");
    JsonObject axis(manifest.file(), &axes[i], mesh.keyPath(where) + ".");
    LayoutAxis out;
    out.name = escapeInvalidUtf8(axis.getString("name"));
    out.size = axis.getInt("size", 1, n);
    for (const LayoutAxis &other : layout.axes)
      if (other.name == out.name)
        axis.fail("name", "names an axis listed twice");
    layout.axes.push_back(std::move(out));
  }

  if (manifest.has("topology")) {
    JsonObject topology = manifest.getObject("topology");
    layout.nnodes = topology.getInt("nnodes", 1, n);
    layout.gpusPerNode = topology.getInt("gpus_per_node", 1, n);
    if (layout.nnodes * layout.gpusPerNode != n)
      topology.fail("gpus_per_node",
                    "is " + std::to_string(layout.gpusPerNode) + ": nnodes " +
                        std::to_string(layout.nnodes) + " x gpus_per_node " +
                        std::to_string(layout.gpusPerNode) + " = " +
                        std::to_string(layout.nnodes * layout.gpusPerNode) +
                        " is not mesh.num_gpus " + std::to_string(n));
  } else {
    layout.nnodes = 1;
    layout.gpusPerNode = n;
  }

  JsonObject groups = manifest.getObject("groups");
  for (LayoutAxis &axis : layout.axes)
    if (axis.size > 1)
      axis.groups = groups.getIntLists(axis.name, 0, n - 1);

  const json &ranks =
      manifest.raw().contains("ranks") ? manifest.raw()["ranks"] : json();
  if (!ranks.is_array() || int64_t(ranks.size()) != n)
    manifest.failAt("ranks",
                    manifest.raw().contains("ranks") ? &ranks : nullptr,
                    "is " + describeJson(ranks) + ", expected a list of " +
                        std::to_string(n) + " rank entries (mesh.num_gpus)");
  layout.coords.assign(n, std::vector<int64_t>(layout.axes.size(), 0));
  layout.programs.assign(n, "");
  layout.servedReplica.assign(n, -1);
  for (int64_t r = 0; r < n; ++r) {
    std::string where = "ranks[" + std::to_string(r) + "]";
    if (!ranks[r].is_object())
      manifest.failAt(where, &ranks[r],
                      "is " + describeJson(ranks[r]) + ", expected an object");
    JsonObject entry(manifest.file(), &ranks[r], where + ".");
    if (entry.getInt("rank", 0, n - 1) != r)
      entry.fail("rank", "is out of order; expected " + std::to_string(r));
    if (auto program = ranks[r].find("program");
        program != ranks[r].end() && program->is_string())
      layout.programs[r] = escapeInvalidUtf8(program->get<std::string>());
    // A rank without a program sits outside the mesh: it names the replica
    // its text encoder or VAE serves instead.
    if (layout.programs[r].empty() && entry.has("replica")) {
      layout.servedReplica[r] = entry.getInt("replica", 0, n - 1);
      continue;
    }
    JsonObject coords = entry.getObject("coords");
    for (size_t a = 0; a < layout.axes.size(); ++a)
      if (layout.axes[a].size > 1)
        layout.coords[r][a] =
            coords.getInt(layout.axes[a].name, 0, layout.axes[a].size - 1);
  }
  return layout;
}

std::string RankLayout::roleOf(int64_t rank) const {
  if (!programs[size_t(rank)].empty())
    return programs[size_t(rank)];
  if (servedReplica[size_t(rank)] >= 0)
    return "text_encoder/vae of replica " + std::to_string(servedReplica[size_t(rank)]);
  return "idle";
}

std::string renderLayoutSvg(const RankLayout &layout) {
  const int64_t drawn = std::min(layout.numGpus, kMaxDrawnRanks);
  const int64_t gpn = layout.gpusPerNode;
  const int64_t cols = std::min<int64_t>(gpn, 16);
  const int64_t rowsPerNode = (gpn + cols - 1) / cols;
  const int64_t drawnNodes = (drawn + gpn - 1) / gpn;
  std::vector<size_t> shown = splitAxes(layout);

  size_t labelChars = 4;
  for (int64_t r = 0; r < drawn; ++r)
    labelChars = std::max(labelChars, coordLabel(layout, r).size());
  const double boxW = std::max<double>(56, 6.8 * double(labelChars) + 14);
  const double boxH = 40, gapX = 14, gapY = 34, nodeGap = 16, pad = 10;
  const double left = 80, top = 44;
  const double rowH = boxH + gapY;
  const double nodeH = double(rowsPerNode) * rowH + nodeGap;

  auto boxX = [&](int64_t rank) {
    return left + double((rank % gpn) % cols) * (boxW + gapX);
  };
  auto boxY = [&](int64_t rank) {
    return top + double(layout.nodeOf(rank)) * nodeH +
           double((rank % gpn) / cols) * rowH;
  };

  // Legend lines: one per shown axis, the crossing mark, a cap note.
  struct LegendLine {
    std::string colour, text, textColour;
    bool dashed;
  };
  std::vector<LegendLine> legend;
  for (size_t a : shown) {
    const LayoutAxis &axis = layout.axes[a];
    int64_t crossing = 0;
    for (const auto &group : axis.groups)
      crossing += layout.crossesNodes(group);
    std::string text = axis.name + " (size " + std::to_string(axis.size) +
                       "): " + std::to_string(axis.groups.size()) + " group" +
                       (axis.groups.size() == 1 ? "" : "s");
    if (crossing)
      text += ", " + std::to_string(crossing) + " cross" +
              (crossing == 1 ? "es" : "") + " nodes";
    legend.push_back(
        {axisColour(axis.name), text, crossing ? kCrossColour : "#222", false});
  }
  legend.push_back({kCrossColour,
                    "red dashes: a link between GPUs on different nodes "
                    "(the group crosses nodes)",
                    "#222", true});
  if (drawn < layout.numGpus)
    legend.push_back({"",
                      "showing ranks 0-" + std::to_string(drawn - 1) + " of " +
                          std::to_string(layout.numGpus) +
                          "; `ditc explain PLAN_DIR` lists every rank",
                      kCrossColour, false});

  const double legendTop = top + double(drawnNodes) * nodeH + 8;
  const double height = legendTop + 20.0 * double(legend.size()) + pad;
  size_t legendChars = headline(layout).size();
  for (const LegendLine &line : legend)
    legendChars = std::max(legendChars, line.text.size() + 6);
  const double width = std::max(left + double(cols) * (boxW + gapX) + pad,
                                7.0 * double(legendChars) + 2 * pad);

  std::string svg;
  svg += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(width) +
         "\" height=\"" + number(height) + "\" viewBox=\"0 0 " + number(width) +
         " " + number(height) +
         "\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"11\">\n";
  svg += "<title>" + xmlEscape(headline(layout)) + "</title>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text class=\"headline\" x=\"" + number(pad) +
         "\" y=\"22\" "
         "font-size=\"14\" font-weight=\"bold\">" +
         xmlEscape(headline(layout)) +
         (drawn < layout.numGpus
              ? " (the first " + std::to_string(drawn) + " drawn)"
              : std::string()) +
         "</text>\n";

  // Nodes: a frame per node, then its GPU boxes.
  for (int64_t node = 0; node < drawnNodes; ++node) {
    double y = top + double(node) * nodeH - 6;
    svg += "<g class=\"node\">\n<rect x=\"" + number(pad) + "\" y=\"" +
           number(y) + "\" width=\"" +
           number(left - pad + double(cols) * (boxW + gapX) - gapX / 2) +
           "\" height=\"" + number(nodeH - nodeGap + 2) +
           "\" rx=\"6\" fill=\"#f4f4f4\" stroke=\"#999\"/>\n";
    svg += "<text x=\"" + number(pad + 6) + "\" y=\"" + number(y + 22) +
           "\" font-weight=\"bold\">node " + std::to_string(node) +
           "</text>\n</g>\n";
  }
  for (int64_t r = 0; r < drawn; ++r) {
    double x = boxX(r), y = boxY(r);
    bool idle = layout.programs[r].empty();
    std::string tip = "rank " + std::to_string(r) + ": node " +
                      std::to_string(layout.nodeOf(r)) + ", GPU " +
                      std::to_string(r % gpn) + ", " + layout.roleOf(r);
    svg += "<g class=\"gpu\"><title>" + xmlEscape(tip) + "</title><rect x=\"" +
           number(x) + "\" y=\"" + number(y) + "\" width=\"" + number(boxW) +
           "\" height=\"" + number(boxH) + "\" rx=\"4\" fill=\"" +
           (idle ? "#e0e0e0" : "white") + "\" stroke=\"#333\"" +
           (idle ? " stroke-dasharray=\"3 2\"" : "") + "/>";
    svg += "<text class=\"rank\" x=\"" + number(x + 6) + "\" y=\"" +
           number(y + 15) + "\" font-weight=\"bold\">r" + std::to_string(r) +
           "</text>";
    svg += "<text class=\"coords\" x=\"" + number(x + 6) + "\" y=\"" +
           number(y + 31) + "\">" + xmlEscape(coordLabel(layout, r)) +
           "</text></g>\n";
  }

  // Links: each group chains its members in order. Every axis leaves the
  // box bottom at its own port and bows below by its own depth, so links
  // of different axes stay apart.
  for (size_t k = 0; k < shown.size(); ++k) {
    const LayoutAxis &axis = layout.axes[shown[k]];
    double portX = boxW * double(k + 1) / double(shown.size() + 1);
    double bow =
        10 + 14 * double(k) / double(std::max<size_t>(1, shown.size()));
    svg += "<g class=\"links " + xmlEscape(axis.name) + "\" fill=\"none\">\n";
    for (const auto &group : axis.groups) {
      bool crossing = layout.crossesNodes(group);
      for (size_t i = 0; i + 1 < group.size(); ++i) {
        int64_t a = group[i], b = group[i + 1];
        if (a >= drawn || b >= drawn)
          continue;
        // Within a row, both ends leave the bottom and the link bows
        // below the row; between rows it runs from one box's bottom edge
        // to the other's top edge.
        double x1 = boxX(a) + portX, x2 = boxX(b) + portX;
        double ya = boxY(a), yb = boxY(b);
        std::string d;
        if (ya == yb) {
          double y = ya + boxH;
          d = "M" + number(x1) + "," + number(y) + " C" + number(x1) + "," +
              number(y + bow) + " " + number(x2) + "," + number(y + bow) + " " +
              number(x2) + "," + number(y);
        } else {
          double y1 = ya < yb ? ya + boxH : ya, y2 = ya < yb ? yb : yb + boxH;
          double mid = (y1 + y2) / 2;
          d = "M" + number(x1) + "," + number(y1) + " C" + number(x1) + "," +
              number(mid) + " " + number(x2) + "," + number(mid) + " " +
              number(x2) + "," + number(y2);
        }
        bool linkCrosses = layout.nodeOf(a) != layout.nodeOf(b);
        std::string title = "<title>" + xmlEscape(axis.name) + " group " +
                            shortListText(group) +
                            (crossing ? " crosses nodes" : "") + "</title>";
        if (linkCrosses)
          svg += "<path class=\"crossing\" d=\"" + d + "\" stroke=\"" +
                 kCrossColour +
                 "\" stroke-width=\"5\" stroke-dasharray=\"6 4\" "
                 "stroke-opacity=\"0.7\">" +
                 title + "</path>\n";
        svg += "<path class=\"link\" d=\"" + d + "\" stroke=\"" +
               axisColour(axis.name) + "\" stroke-width=\"2\">" + title +
               "</path>\n";
      }
    }
    svg += "</g>\n";
  }

  svg += "<g class=\"legend\">\n";
  for (size_t i = 0; i < legend.size(); ++i) {
    const LegendLine &line = legend[i];
    double y = legendTop + 20.0 * double(i) + 10;
    if (!line.colour.empty())
      svg += "<line x1=\"" + number(pad) + "\" y1=\"" + number(y - 4) +
             "\" x2=\"" + number(pad + 30) + "\" y2=\"" + number(y - 4) +
             "\" stroke=\"" + line.colour + "\" stroke-width=\"" +
             (line.dashed ? "5\" stroke-dasharray=\"6 4\"" : "3\"") + "/>";
    svg += "<text x=\"" + number(pad + 38) + "\" y=\"" + number(y) +
           "\" fill=\"" + line.textColour + "\">" + xmlEscape(line.text) +
           "</text>\n";
  }
  svg += "</g>\n</svg>\n";
  return svg;
}

std::string formatLayoutText(const RankLayout &layout) {
  std::vector<size_t> shown = splitAxes(layout);
  std::string out = headline(layout) + "\n";
  out += "mesh, outermost first:";
  for (const LayoutAxis &axis : layout.axes)
    out += " " + axis.name + "=" + std::to_string(axis.size);
  out += "\n\n";

  // The rank table, columns padded to their widest cell.
  std::vector<std::string> header = {"rank", "node", "gpu"};
  for (size_t a : shown)
    header.push_back(layout.axes[a].name);
  header.push_back("program");
  std::vector<std::vector<std::string>> rows = {header};
  for (int64_t r = 0; r < layout.numGpus; ++r) {
    std::vector<std::string> row = {std::to_string(r),
                                    std::to_string(layout.nodeOf(r)),
                                    std::to_string(r % layout.gpusPerNode)};
    for (size_t a : shown)
      row.push_back(layout.servedReplica[r] >= 0 ? "-"
                                                 : std::to_string(layout.coords[r][a]));
    row.push_back(layout.roleOf(r));
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(header.size(), 0);
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], row[c].size());
  for (const auto &row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += row[c] + (c + 1 < row.size()
                            ? std::string(widths[c] - row[c].size() + 2, ' ')
                            : "");
    out += line + "\n";
  }

  out += "\ngroups:\n";
  if (shown.empty())
    out += "  none: every axis has size 1\n";
  for (size_t a : shown) {
    const LayoutAxis &axis = layout.axes[a];
    out += "  " + axis.name + ":";
    for (const auto &group : axis.groups)
      out += " " + rankList(group);
    out += "\n";
  }

  out += "\ncrossing nodes:\n";
  bool any = false;
  for (size_t a : shown) {
    const LayoutAxis &axis = layout.axes[a];
    std::vector<const std::vector<int64_t> *> crossing;
    for (const auto &group : axis.groups)
      if (layout.crossesNodes(group))
        crossing.push_back(&group);
    if (crossing.empty()) {
      out += "  " + axis.name + ": every group within one node\n";
      continue;
    }
    any = true;
    out += "  " + axis.name + ": " + std::to_string(crossing.size()) + " of " +
           std::to_string(axis.groups.size()) + " groups cross nodes\n";
    for (const auto *group : crossing) {
      std::vector<int64_t> nodes = nodesOf(layout, *group);
      out += "    " + rankList(*group) + " crosses nodes " +
             rankList(nodes).substr(1, rankList(nodes).size() - 2) + "\n";
    }
  }
  if (!any)
    out += "  no group crosses nodes\n";
  return out;
}

json layoutJson(const RankLayout &layout) {
  json axes = json::array();
  json groups = json::object();
  for (const LayoutAxis &axis : layout.axes) {
    axes.push_back({{"name", axis.name}, {"size", axis.size}});
    if (axis.size == 1)
      continue;
    json list = json::array();
    for (const auto &group : axis.groups)
      list.push_back({{"ranks", group},
                      {"nodes", nodesOf(layout, group)},
                      {"crosses_nodes", layout.crossesNodes(group)}});
    groups[axis.name] = list;
  }
  json ranks = json::array();
  for (int64_t r = 0; r < layout.numGpus; ++r) {
    json coords = json::object();
    for (size_t a = 0; a < layout.axes.size() && layout.servedReplica[r] < 0; ++a)
      coords[layout.axes[a].name] = layout.coords[r][a];
    json entry = {{"rank", r},
                  {"node", layout.nodeOf(r)},
                  {"gpu", r % layout.gpusPerNode},
                  {"coords", coords},
                  {"program", layout.programs[r].empty() ? json(nullptr)
                                                         : json(layout.programs[r])}};
    // A rank of a component's own: the replica it serves, and no coords.
    if (layout.servedReplica[r] >= 0)
      entry["replica"] = layout.servedReplica[r];
    ranks.push_back(std::move(entry));
  }
  return {{"model", layout.model},
          {"num_gpus", layout.numGpus},
          {"nnodes", layout.nnodes},
          {"gpus_per_node", layout.gpusPerNode},
          {"axes", axes},
          {"ranks", ranks},
          {"groups", groups}};
}

} // namespace ditc
