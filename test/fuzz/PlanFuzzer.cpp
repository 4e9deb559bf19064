//===- PlanFuzzer.cpp - fuzz the plan reader and validator ----------------===//
//
// The input is one JSON object, {"manifest": M, "programs": {FILE: P, ...}},
// laid out as a plan folder. M and P are JSON values or strings (written
// verbatim). When M is an object, the target re-signs the plan as an
// attacker would: each listed program's sha256 and the plan_hash are
// recomputed, so the fuzzer reaches the validator rather than stopping at
// the hash check. Then every program any rank runs is loaded and validated,
// and checked to pair up with its peers, as dit-run's launcher does before
// the rendezvous.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "ditc/Runtime/Plan/CollectivePairing.h"
#include "ditc/Runtime/Plan/Manifest.h"
#include "ditc/Support/BadInput.h"
#include "ditc/Support/Sha256.h"

#include <filesystem>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

using nlohmann::json;

static bool safeRelativePath(const std::string &file) {
  return !file.empty() && file.size() < 200 && file[0] != '/' &&
         file.find("..") == std::string::npos &&
         file.find('\0') == std::string::npos &&
         (file.rfind("programs/", 0) == 0 || file.find('/') == std::string::npos);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  namespace fs = std::filesystem;
  // Inputs nest shallowly; the reader's own depth limit is fuzzed through
  // the verbatim strings.
  json input = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (!input.is_object() || !input.contains("manifest") ||
      !input.contains("programs") || !input["programs"].is_object())
    return 0;
  std::string dir = ditc::fuzz::scratchDir() + "/plan";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir + "/programs", ec);
  std::map<std::string, std::string> files;
  for (auto it = input["programs"].begin(); it != input["programs"].end(); ++it) {
    if (!safeRelativePath(it.key()))
      continue;
    std::string text = it.value().is_string()
                           ? it.value().get<std::string>()
                           : it.value().dump(-1, ' ', false,
                                             json::error_handler_t::replace);
    files[it.key()] = text;
    ditc::fuzz::writeText(dir + "/" + it.key(), text);
  }
  json &manifest = input["manifest"];
  std::string manifestText;
  if (manifest.is_string()) {
    manifestText = manifest.get<std::string>();
  } else {
    if (manifest.is_object() && manifest.contains("programs") &&
        manifest["programs"].is_array()) {
      std::string hashes;
      for (json &entry : manifest["programs"]) {
        if (!entry.is_object() || !entry.contains("file") ||
            !entry["file"].is_string())
          continue;
        auto file = files.find(entry["file"].get<std::string>());
        if (file == files.end())
          continue;
        entry["sha256"] = ditc::sha256Hex(file->second);
        hashes += entry["sha256"].get<std::string>();
      }
      json unhashed = manifest;
      unhashed.erase("plan_hash");
      manifest["plan_hash"] = ditc::sha256Hex(
          unhashed.dump(-1, ' ', false, json::error_handler_t::replace) + hashes);
    }
    manifestText = manifest.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  ditc::fuzz::writeText(dir + "/manifest.json", manifestText);
  try {
    ditc::runtime::Manifest m = ditc::runtime::loadManifest(dir);
    ditc::runtime::loadEveryProgram(m);
    m.outputHolders();
  } catch (const ditc::BadInput &error) {
    ditc::fuzz::noteRefusal(error.what());
  }
  return 0;
}
