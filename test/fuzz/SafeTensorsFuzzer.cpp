//===- SafeTensorsFuzzer.cpp - fuzz the safetensors reader ----------------===//
//
// The input is a .safetensors file. It is opened, validated, and the first
// elements of every tensor are read as floats: a header the reader accepts
// must never lead a read outside its tensor or the file.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"
#include "ditc/Checkpoint/SafeTensors.h"
#include "ditc/Support/BadInput.h"

#include <algorithm>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = ditc::fuzz::scratchDir() + "/input.safetensors";
  ditc::fuzz::writeBytes(path, data, size);
  try {
    ditc::checkpoint::SafeTensorsFile file(path);
    std::vector<float> out(64);
    for (const ditc::checkpoint::StoredTensor &tensor : file.tensors()) {
      int64_t count = std::min<int64_t>(64, tensor.elements());
      file.readFloats(tensor, 0, count, out.data());
      if (tensor.end > int64_t(size) || tensor.begin > tensor.end)
        __builtin_trap(); // an accepted tensor outside the file
    }
  } catch (const ditc::BadInput &error) {
    ditc::fuzz::noteRefusal(error.what());
  }
  return 0;
}
