//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// Format: magic "\x93NUMPY", version (1.0: 2-byte header length, 2.0/3.0:
// 4-byte), then a Python dict literal with 'descr', 'fortran_order' and
// 'shape', padded so that the data starts at a multiple of 64 bytes.
//
//===----------------------------------------------------------------------===//
#include "gopt/runtime/Npy.h"
#include "gopt/runtime/LowPrecision.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace gopt::runtime {
namespace {

StatusOr<DType> dtypeFromDescr(const std::string &descr) {
  if (descr.size() < 3)
    return invalidArgument("unsupported dtype '", descr, "'");
  char order = descr[0];
  std::string code = descr.substr(1);
  bool littleOrNA = order == '<' || order == '|' || order == '=';
  if (!littleOrNA)
    return invalidArgument("big-endian dtype '", descr, "' is not supported");
  if (code == "f4")
    return DType::kF32;
  if (code == "f2")
    return DType::kF16;
  if (code == "i8")
    return DType::kI64;
  if (code == "i4")
    return DType::kI32;
  if (code == "i1")
    return DType::kI8;
  if (code == "u1")
    return DType::kU8;
  if (code == "b1")
    return DType::kBool;
  if (code == "f8")
    return DType::kF64;
  if (code == "i2")
    return DType::kI16;
  if (code == "u2")
    return DType::kU16;
  if (code == "u4")
    return DType::kU32;
  if (code == "u8")
    return DType::kU64;
  return invalidArgument(
      "unsupported dtype '", descr,
      "' (supported: f8, f4, f2, i8, i4, i2, i1, u8, u4, u2, u1, b1)");
}

const char *descrOf(DType dtype) {
  switch (dtype) {
  case DType::kF32:
  case DType::kBF16: // written as f32
  case DType::kF8E4M3FN:
  case DType::kF8E4M3FNUZ:
  case DType::kF8E5M2:
  case DType::kF8E5M2FNUZ:
    return "<f4";
  case DType::kI4: // one byte per element, as the runtime holds them
    return "|i1";
  case DType::kU4:
    return "|u1";
  case DType::kF16:
    return "<f2";
  case DType::kI64:
    return "<i8";
  case DType::kI32:
    return "<i4";
  case DType::kI8:
    return "|i1";
  case DType::kU8:
    return "|u1";
  case DType::kBool:
    return "|b1";
  case DType::kF64:
    return "<f8";
  case DType::kI16:
    return "<i2";
  case DType::kU16:
    return "<u2";
  case DType::kU32:
    return "<u4";
  case DType::kU64:
    return "<u8";
  default:
    return "";
  }
}

// Returns the value text of `key` in the header dict, up to the next
// top-level comma or closing brace.
StatusOr<std::string> dictValue(const std::string &header,
                                const std::string &key) {
  std::string quoted = "'" + key + "'";
  size_t pos = header.find(quoted);
  if (pos == std::string::npos)
    return invalidArgument("header has no '", key, "'");
  pos = header.find(':', pos + quoted.size());
  if (pos == std::string::npos)
    return invalidArgument("malformed header at '", key, "'");
  ++pos;
  while (pos < header.size() && header[pos] == ' ')
    ++pos;
  int depth = 0;
  size_t end = pos;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  return header.substr(pos, end - pos);
}

StatusOr<Tensor> parse(const std::string &bytes) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return invalidArgument("not a .npy file (bad magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) |
                static_cast<unsigned char>(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return invalidArgument("truncated header");
    headerLen = 0;
    for (int i = 3; i >= 0; --i)
      headerLen = headerLen << 8 | static_cast<unsigned char>(bytes[8 + i]);
    headerStart = 12;
  } else {
    return invalidArgument("unsupported .npy version ", major);
  }
  if (headerStart + headerLen > bytes.size())
    return invalidArgument("truncated header");
  std::string header = bytes.substr(headerStart, headerLen);

  GOPT_ASSIGN_OR_RETURN(std::string descr, dictValue(header, "descr"));
  if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"'))
    return invalidArgument("malformed descr ", descr);
  descr = descr.substr(1, descr.size() - 2);
  GOPT_ASSIGN_OR_RETURN(DType dtype, dtypeFromDescr(descr));
  GOPT_ASSIGN_OR_RETURN(std::string fortran,
                        dictValue(header, "fortran_order"));
  if (fortran.rfind("False", 0) != 0)
    return invalidArgument("Fortran-order arrays are not supported");
  GOPT_ASSIGN_OR_RETURN(std::string shapeText, dictValue(header, "shape"));
  if (shapeText.empty() || shapeText.front() != '(' || shapeText.back() != ')')
    return invalidArgument("malformed shape ", shapeText);
  Shape shape;
  std::string inner = shapeText.substr(1, shapeText.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(" L");
    if (b == std::string::npos)
      continue;
    char *end = nullptr;
    long long dim = std::strtoll(item.c_str() + b, &end, 10);
    if (end == item.c_str() + b || dim < 0)
      return invalidArgument("malformed shape ", shapeText);
    shape.push_back(dim);
  }
  size_t dataStart = headerStart + headerLen;
  std::optional<int64_t> size = checkedByteSize(shape, dtype);
  if (!size)
    return invalidArgument("shape ", shapeToString(shape),
                           " is too large to address");
  size_t need = static_cast<size_t>(*size);
  if (bytes.size() - dataStart < need)
    return invalidArgument("truncated data: ", bytes.size() - dataStart,
                           " bytes, shape ", shapeToString(shape), " needs ",
                           need);
  Tensor t = Tensor::allocate(dtype, shape);
  if (need)
    std::memcpy(t.data(), bytes.data() + dataStart, need);
  return t;
}

} // namespace

StatusOr<Tensor> parseNpy(const std::string &bytes, const std::string &origin) {
  StatusOr<Tensor> t = parse(bytes);
  if (!t.ok())
    return invalidArgument("'", origin, "': ", t.status().message());
  return t;
}

StatusOr<Tensor> readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return notFound("cannot open .npy file '", path, "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parseNpy(buffer.str(), path);
}

std::string serializeNpy(const Tensor &tensor) {
  std::string header = "{'descr': '" + std::string(descrOf(tensor.dtype())) +
                       "', 'fortran_order': False, 'shape': (";
  for (int64_t d : tensor.shape())
    header += std::to_string(d) + ", ";
  // Python tuples: "(2, 3)", but "(2,)" for one element.
  if (tensor.rank() > 1)
    header.erase(header.size() - 2);
  else if (tensor.rank() == 1)
    header.erase(header.size() - 1);
  header += "), }";
  // Pad with spaces and a newline so that the data is 64-byte aligned.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  if (tensor.dtype() == DType::kBF16) {
    const uint16_t *src = tensor.data<uint16_t>();
    for (int64_t i = 0; i < tensor.numElements(); ++i) {
      float f = bf16ToFloat(src[i]);
      out.append(reinterpret_cast<const char *>(&f), 4);
    }
  } else if (isLowPrecisionDType(tensor.dtype()) &&
             tensor.dtype() != DType::kI4 && tensor.dtype() != DType::kU4) {
    const uint8_t *src = tensor.data<uint8_t>();
    for (int64_t i = 0; i < tensor.numElements(); ++i) {
      float f = float8ToFloat(tensor.dtype(), src[i]);
      out.append(reinterpret_cast<const char *>(&f), 4);
    }
  } else {
    out.append(static_cast<const char *>(tensor.data()), tensor.byteSize());
  }
  return out;
}

Status writeNpy(const std::string &path, const Tensor &tensor) {
  if (!*descrOf(tensor.dtype()))
    return invalidArgument("cannot write element type ",
                           dtypeName(tensor.dtype()), " to '", path, "'");
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return notFound("cannot open '", path, "' for writing");
  out << serializeNpy(tensor);
  out.close();
  if (!out)
    return dataLoss("error writing '", path, "'");
  return Status::success();
}

} // namespace gopt::runtime
