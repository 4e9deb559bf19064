//===- PlanWriter.cpp - a built plan onto disk, no MLIR -------------------===//
//
// Renders every file, sizes the whole output, then writes the folder under
// a temporary name and renames it into place. The programs' hashes and the
// plan hash are computed here, from the bytes written.
//
//===----------------------------------------------------------------------===//
#include "ditc/Plan/PlanWriter.h"
#include "ditc/Plan/RankLayout.h"
#include "ditc/Support/AtomicFile.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/JsonFile.h"
#include "ditc/Support/Sha256.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

using nlohmann::json;

namespace ditc {

/// printf into a string of any length.
static std::string printed(const char *format, ...) {
  va_list args, copy;
  va_start(args, format);
  va_copy(copy, args);
  int size = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out(size > 0 ? size_t(size) : 0, '\0');
  if (size > 0)
    std::vsnprintf(out.data(), out.size() + 1, format, args);
  va_end(args);
  return out;
}

static std::string mib(uint64_t bytes) {
  return printed("%.1f MiB", double(bytes) / (1 << 20));
}

/// The most bytes one `ditc compile` writes. The largest plan without
/// --per-rank (2^20 ranks) is about 430 MB; bundles repeat the manifest,
/// whose size grows with the rank count, once per rank, so their total grows
/// with its square.
constexpr uint64_t kMaxPlanBytes = uint64_t(1) << 30;

/// Plan files are valid UTF-8 whatever a name in them held: strings from
/// outside (the model's name) are escaped where they are put in, and any
/// other invalid byte is replaced rather than thrown about.
static std::string dumpJson(const json &value, int indent = -1) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string writePlan(Plan &plan, const std::string &dir, bool perRank) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target = fs::absolute(fs::path(dir), ec).lexically_normal();
  if (ec || target.empty())
    throw BadInput(dir + ": is not a usable path for the plan folder");
  if (!target.has_filename()) // "plan/" or "."
    target = target.parent_path();
  if (fs::exists(target, ec)) {
    if (!fs::is_directory(target, ec))
      throw BadInput(dir + ": exists and is not a folder; -o needs a new or "
                           "empty folder");
    if (!fs::is_empty(target, ec))
      throw BadInput(dir + ": is not empty; -o needs a new or empty folder");
  }

  // Everything is rendered and sized before anything is written.
  json &entries = plan.manifest["programs"];
  if (!entries.is_array() || entries.size() != plan.programs.size())
    throw std::logic_error("writePlan: the manifest lists " +
                           std::to_string(entries.size()) + " programs, the plan holds " +
                           std::to_string(plan.programs.size()));
  std::vector<std::string> contents;
  std::map<std::string, uint64_t> programBytes; // by program id
  std::string hashInput;
  for (size_t i = 0; i < plan.programs.size(); ++i) {
    ProgramFile &p = plan.programs[i];
    if (entries[i].value("id", "") != p.id)
      throw std::logic_error("writePlan: manifest program " + std::to_string(i) +
                             " is not '" + p.id + "'");
    std::string content = dumpJson(p.program) + "\n";
    std::string hash = sha256Hex(content);
    programBytes[p.id] = content.size();
    entries[i]["sha256"] = hash;
    hashInput += hash;
    contents.push_back(std::move(content));
  }
  std::string planHash = sha256Hex(dumpJson(plan.manifest) + hashInput);
  plan.manifest["plan_hash"] = planHash;
  std::string manifestText = dumpJson(plan.manifest, 1) + "\n";
  // A picture of where the ranks sit, drawn from the manifest alone (the
  // same data `ditc explain` reads back). Not hashed: nothing runs it.
  std::string layoutSvg =
      renderLayoutSvg(readRankLayout(JsonObject("manifest.json", &plan.manifest)));

  // manifest x (bundles + 1) + programs x (1 + the bundles that run them).
  // Every term is far below 2^64: at most 2^20 bundles of files a process
  // holds in memory.
  uint64_t total = manifestText.size() + plan.partitionedMLIR.size() +
                   layoutSvg.size();
  for (const std::string &content : contents)
    total += content.size();
  uint64_t bundles = 0;
  if (perRank) {
    for (const json &rank : plan.manifest["ranks"]) {
      ++bundles;
      total += manifestText.size();
      for (const char *key : {"program", "program_2"})
        if (rank.contains(key) && rank[key].is_string())
          total += programBytes[rank[key].get<std::string>()];
    }
  }
  if (total > kMaxPlanBytes) {
    std::string why =
        perRank ? " with --per-rank (" + std::to_string(bundles) +
                      " rank bundles, each repeating the " +
                      mib(manifestText.size()) +
                      " manifest); drop --per-rank and ship the plan folder "
                      "itself to every host (dit-run PLAN_DIR runs any of "
                      "its ranks)"
                : "; use fewer ranks";
    throw BadInput(dir + ": the plan would take " + std::to_string(total) +
                   " bytes (" + mib(total) + "), more than the " +
                   std::to_string(kMaxPlanBytes) + " bytes (1 GiB) ditc " +
                   "compile writes" + why);
  }

  // The plan is built beside its destination and renamed into place, so a
  // failure leaves nothing behind. mkdtemp picks an unpredictable name and
  // fails rather than reuse anything already there (a planted folder or
  // symbolic link).
  fs::path parent = target.parent_path();
  fs::create_directories(parent, ec);
  if (ec)
    throw BadInput(dir + ": cannot create the plan folder's parent: " +
                   ec.message());
  std::string pattern =
      (parent / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data()))
    throw BadInput(dir + ": cannot create the plan folder: " +
                   std::strerror(errno));
  fs::path temp(name.data());
  try {
    // mkdtemp makes the folder private; the plan gets the usual mode.
    mode_t mask = ::umask(0);
    ::umask(mask);
    if (::chmod(temp.c_str(), 0777 & ~mask) != 0 ||
        ::mkdir((temp / "programs").c_str(), 0777) != 0)
      throw BadInput(dir + ": cannot create the plan folder: " +
                     std::strerror(errno));
    for (size_t i = 0; i < plan.programs.size(); ++i)
      writeFileAtomically((temp / plan.programs[i].file).string(), contents[i]);
    writeFileAtomically((temp / "manifest.json").string(), manifestText);
    writeFileAtomically((temp / "partitioned.mlir").string(),
                        plan.partitionedMLIR);
    writeFileAtomically((temp / "layout.svg").string(), layoutSvg);
    if (perRank) {
      // Each bundle repeats the manifest (same plan hash) and carries only
      // the programs its rank runs.
      for (const json &rank : plan.manifest["ranks"]) {
        fs::path bundle = temp / ("rank-" + std::to_string(rank["rank"].get<int64_t>()));
        fs::create_directories(bundle / "programs", ec);
        if (ec)
          throw BadInput(dir + ": cannot create " + bundle.filename().string() +
                         ": " + ec.message());
        writeFileAtomically((bundle / "manifest.json").string(), manifestText);
        for (const char *key : {"program", "program_2"}) {
          if (!rank.contains(key) || rank[key].is_null())
            continue;
          std::string file = "programs/" + rank[key].get<std::string>() + ".json";
          fs::copy_file(temp / file, bundle / file, ec);
          if (ec)
            throw BadInput(dir + ": cannot write " + (bundle / file).string() +
                           ": " + ec.message());
        }
      }
    }
    if (fs::exists(target, ec))
      fs::remove(target, ec); // the empty folder the user named
    fs::rename(temp, target, ec);
    if (ec)
      throw BadInput(dir + ": cannot be written: " + ec.message());
    return planHash;
  } catch (...) {
    fs::remove_all(temp, ec);
    throw;
  }
}

std::string formatPlanSummary(const Plan &plan) {
  std::string out = printed("%-8s %-6s %-9s %-44s %-40s %12s %12s\n", "program",
                            "stage", "branches", "collectives / step",
                            "bytes sent / step", "params", "activations");
  for (const json &p : plan.manifest.at("programs")) {
    const json &step = p.at("per_step");
    std::string collectives, bytes, branches;
    for (auto &[kind, n] : step.at("collectives").items())
      collectives += (collectives.empty() ? "" : " ") + kind + "=" +
                     std::to_string(n.get<int64_t>());
    for (auto &[axis, n] : step.at("bytes_sent").items())
      bytes += (bytes.empty() ? "" : " ") + axis + "=" + mib(n.get<int64_t>());
    for (const json &b : p.at("branches"))
      branches += (branches.empty() ? "" : ",") + std::to_string(b.get<int64_t>());
    out += printed("%-8s %-6lld %-9s %-44s %-40s %12s %12s\n",
                   p.at("id").get<std::string>().c_str(),
                   (long long)p.at("stage").get<int64_t>(), branches.c_str(),
                   collectives.empty() ? "none" : collectives.c_str(),
                   bytes.empty() ? "none" : bytes.c_str(),
                   mib(step.at("param_bytes").get<int64_t>()).c_str(),
                   mib(step.at("activation_bytes").get<int64_t>()).c_str());
  }
  return out;
}

} // namespace ditc
