//===- NpyFuzzer.cpp - fuzz the .npy reader --------------------------------===//
#include "FuzzInput.h"
#include "ditc/Runtime/IO/Npy.h"
#include "ditc/Support/BadInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = ditc::fuzz::scratchDir() + "/input.npy";
  ditc::fuzz::writeBytes(path, data, size);
  try {
    ditc::runtime::NpyArray array = ditc::runtime::readNpy(path);
    size_t count = 1;
    for (int64_t d : array.shape)
      count *= size_t(d);
    if (count != array.data.size())
      __builtin_trap(); // the reader returned a shape its data does not fill
  } catch (const ditc::BadInput &error) {
    ditc::fuzz::noteRefusal(error.what());
  }
  return 0;
}
