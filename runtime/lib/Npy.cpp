//===- Npy.cpp - NumPy .npy files, float32, C order -----------------------===//
#include "ditc/Runtime/Npy.h"
#include "ditc/Support/BadInput.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace ditc::runtime {

std::string encodeNpy(const std::vector<int64_t> &shape, const float *data) {
  std::string dims;
  int64_t count = 1;
  for (int64_t d : shape) {
    dims += std::to_string(d) + ", ";
    count *= d;
  }
  if (shape.size() > 1)
    dims.erase(dims.size() - 2); // "(2, 3)" but "(2,)"
  else if (shape.size() == 1)
    dims.pop_back();
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char *>(data), size_t(count) * sizeof(float));
  return out;
}

NpyArray readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw BadInput(path + ": cannot be read (expected a .npy file)");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string bytes = buffer.str();
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    throw BadInput(path + ": not a .npy file (no \\x93NUMPY magic)");
  unsigned major = uint8_t(bytes[6]);
  size_t headerLength, offset;
  if (major == 1) {
    headerLength = uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8);
    offset = 10;
  } else if ((major == 2 || major == 3) && bytes.size() >= 12) {
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength = (headerLength << 8) | uint8_t(bytes[8 + i]);
    offset = 12;
  } else {
    throw BadInput(path + ": .npy format version " + std::to_string(major) +
                   " is not 1, 2 or 3");
  }
  if (offset + headerLength > bytes.size())
    throw BadInput(path + ": .npy header runs past the end of the file");
  std::string header = bytes.substr(offset, headerLength);
  std::smatch match;
  if (!std::regex_search(header, match, std::regex("'descr':\\s*'([^']*)'")))
    throw BadInput(path + ": .npy header has no 'descr'");
  std::string descr = match[1];
  if (descr != "<f4" && descr != "<f8")
    throw BadInput(path + ": dtype '" + descr +
                   "' is not supported; expected float32 ('<f4') or float64 ('<f8')");
  if (std::regex_search(header, std::regex("'fortran_order':\\s*True")))
    throw BadInput(path + ": Fortran-order arrays are not supported; save in C order");
  if (!std::regex_search(header, match, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    throw BadInput(path + ": .npy header has no 'shape'");
  NpyArray array;
  std::string dims = match[1];
  std::stringstream list(dims);
  std::string item;
  int64_t count = 1;
  while (std::getline(list, item, ',')) {
    if (item.find_first_not_of(" ") == std::string::npos)
      continue;
    int64_t d = parseIntegerFlag(path + " shape", item.substr(item.find_first_not_of(" ")),
                                 0, kAbsurdSize * 64);
    array.shape.push_back(d);
    count *= d;
    if (count > (int64_t(1) << 34))
      throw BadInput(path + ": array shape (" + dims + ") is absurdly large");
  }
  size_t element = descr == "<f4" ? 4 : 8;
  size_t data = offset + headerLength;
  if (bytes.size() - data != size_t(count) * element)
    throw BadInput(path + ": holds " + std::to_string(bytes.size() - data) +
                   " data bytes but shape (" + dims + ") needs " +
                   std::to_string(size_t(count) * element));
  array.data.resize(size_t(count));
  if (element == 4) {
    std::memcpy(array.data.data(), bytes.data() + data, size_t(count) * 4);
  } else {
    for (int64_t i = 0; i < count; ++i) {
      double v;
      std::memcpy(&v, bytes.data() + data + size_t(i) * 8, 8);
      array.data[size_t(i)] = float(v);
    }
  }
  return array;
}

} // namespace ditc::runtime
