//===- Npy.cpp - NumPy .npy files, float32, C order -----------------------===//
#include "ditc/Runtime/IO/Npy.h"
#include "ditc/Support/BadInput.h"

#include "ditc/Support/ReadFile.h"

#include <cctype>
#include <cstring>

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

namespace {
/// A cursor over the .npy header, a Python dict literal such as
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }. It is
/// parsed by hand, linearly and without recursion or std::regex.
class HeaderParser {
public:
  HeaderParser(const std::string &text, const std::string &path)
      : text(text), path(path) {}

  NpyHeader parse() {
    NpyHeader header;
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}')
        break;
      std::string key = quoted();
      skipSpace();
      expect(':');
      skipSpace();
      if (key == "descr") {
        header.descr = quoted();
        haveDescr = true;
      } else if (key == "fortran_order") {
        header.fortranOrder = boolean();
        haveOrder = true;
      } else if (key == "shape") {
        header.shape = tuple();
        haveShape = true;
      } else {
        fail("has an unknown key '" + escapeInvalidUtf8(key) +
             "'; expected descr, fortran_order and shape");
      }
      skipSpace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      skipSpace();
      if (peek() != '}')
        fail("expected ',' or '}' at byte " + std::to_string(pos));
    }
    if (!haveDescr || !haveOrder || !haveShape)
      fail("lacks " + std::string(!haveDescr ? "'descr'"
                                  : !haveOrder ? "'fortran_order'"
                                               : "'shape'"));
    return header;
  }

private:
  [[noreturn]] void fail(const std::string &problem) const {
    throw BadInput(escapeInvalidUtf8(path) + ": .npy header " + problem);
  }
  char peek() const { return pos < text.size() ? text[pos] : '\0'; }
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\n'))
      ++pos;
  }
  void expect(char c) {
    if (peek() != c)
      fail(std::string("expected '") + c + "' at byte " + std::to_string(pos));
    ++pos;
  }
  std::string quoted() {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      fail("expected a quoted string at byte " + std::to_string(pos));
    size_t end = text.find(quote, pos + 1);
    if (end == std::string::npos)
      fail("has an unterminated string");
    std::string out = text.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    return out;
  }
  bool boolean() {
    for (const char *word : {"True", "False"})
      if (text.compare(pos, std::strlen(word), word) == 0) {
        pos += std::strlen(word);
        return word[0] == 'T';
      }
    fail("has a fortran_order that is neither True nor False");
  }
  std::vector<int64_t> tuple() {
    expect('(');
    std::vector<int64_t> dims;
    while (true) {
      skipSpace();
      if (peek() == ')') {
        ++pos;
        return dims;
      }
      size_t start = pos;
      while (pos < text.size() && pos - start < 18 && std::isdigit(uint8_t(text[pos])))
        ++pos;
      if (pos == start || std::isdigit(uint8_t(peek())))
        fail("has a shape entry that is not a size of at most 18 digits at byte " +
             std::to_string(start));
      dims.push_back(std::stoll(text.substr(start, pos - start)));
      if (dims.size() > 8)
        fail("has a shape of more than 8 dimensions");
      skipSpace();
      if (peek() == ',')
        ++pos;
      else if (peek() != ')')
        fail("expected ',' or ')' in the shape at byte " + std::to_string(pos));
    }
  }

  const std::string &text;
  const std::string &path;
  size_t pos = 0;
};
} // namespace

NpyHeader parseNpyHeader(const std::string &text, const std::string &path) {
  return HeaderParser(text, path).parse();
}

NpyArray readNpy(const std::string &path) {
  ReadFileOptions options;
  options.what = ".npy file";
  RegularFile file(path, kMaxNpyFileBytes, options);
  std::string shown = escapeInvalidUtf8(path);
  char preamble[12] = {};
  if (file.size() < 10)
    throw BadInput(shown + ": not a .npy file (" + std::to_string(file.size()) +
                   " bytes, shorter than any .npy header)");
  file.readAt(0, std::min<int64_t>(12, file.size()), preamble);
  if (std::memcmp(preamble, "\x93NUMPY", 6) != 0)
    throw BadInput(shown + ": not a .npy file (no \\x93NUMPY magic)");
  unsigned major = uint8_t(preamble[6]);
  int64_t headerLength, offset;
  if (major == 1) {
    headerLength = uint8_t(preamble[8]) | (int64_t(uint8_t(preamble[9])) << 8);
    offset = 10;
  } else if ((major == 2 || major == 3) && file.size() >= 12) {
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength = (headerLength << 8) | uint8_t(preamble[8 + i]);
    offset = 12;
  } else {
    throw BadInput(shown + ": .npy format version " + std::to_string(major) +
                   " is not 1, 2 or 3");
  }
  // NumPy itself refuses headers over 10000 bytes unless told otherwise.
  if (headerLength > kMaxNpyHeaderBytes)
    throw BadInput(shown + ": .npy header is " + std::to_string(headerLength) +
                   " bytes; at most " + std::to_string(kMaxNpyHeaderBytes) +
                   " are accepted");
  if (offset + headerLength > file.size())
    throw BadInput(shown + ": .npy header runs past the end of the file");
  std::string text(size_t(headerLength), '\0');
  file.readAt(offset, headerLength, text.data());
  NpyHeader header = parseNpyHeader(text, path);
  if (header.descr != "<f4" && header.descr != "<f8")
    throw BadInput(shown + ": dtype '" + escapeInvalidUtf8(header.descr) +
                   "' is not supported; expected float32 ('<f4') or float64 ('<f8')");
  if (header.fortranOrder)
    throw BadInput(shown + ": Fortran-order arrays are not supported; save in C order");
  NpyArray array;
  array.shape = header.shape;
  int64_t count = 1;
  constexpr int64_t kMaxElements = int64_t(1) << 34;
  for (int64_t d : array.shape) {
    if (d > 0 && count > kMaxElements / d)
      throw BadInput(shown + ": array shape " + describeShape(array.shape) +
                     " is absurdly large");
    count *= d;
  }
  int64_t element = header.descr == "<f4" ? 4 : 8;
  int64_t data = offset + headerLength;
  if (file.size() - data != count * element)
    throw BadInput(shown + ": holds " + std::to_string(file.size() - data) +
                   " data bytes but shape " + describeShape(array.shape) +
                   " needs " + std::to_string(count * element));
  array.data.resize(size_t(count));
  if (element == 4) {
    file.readAt(data, count * 4, reinterpret_cast<char *>(array.data.data()));
  } else {
    std::vector<double> wide(static_cast<size_t>(count));
    file.readAt(data, count * 8, reinterpret_cast<char *>(wide.data()));
    for (int64_t i = 0; i < count; ++i)
      array.data[size_t(i)] = float(wide[size_t(i)]);
  }
  return array;
}

std::string describeShape(const std::vector<int64_t> &shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

} // namespace ditc::runtime
