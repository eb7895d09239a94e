//===- Mutator.cpp - Deterministic input mutator for gopt-fuzz-smoke ------===//

#include "Mutator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <set>
#include <string_view>

namespace gopt::fuzz {
namespace {

//===----------------------------------------------------------------------===//
// Protobuf wire format
//===----------------------------------------------------------------------===//

enum WireType { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

/// One field of a message. Length-delimited payloads that parse completely
/// as a message are kept as children, so edits inside them re-encode every
/// enclosing length.
struct Field {
  uint64_t number = 0;
  int wire = kVarint;
  uint64_t value = 0;  // varint, fixed32, fixed64
  std::string payload; // kLen when !isMessage
  bool isMessage = false;
  std::vector<Field> children;
};

bool readVarint(std::string_view &in, uint64_t &out) {
  out = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.empty())
      return false;
    uint8_t byte = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    out |= uint64_t(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

void writeVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

bool parseMessage(std::string_view in, int depth, std::vector<Field> &out) {
  while (!in.empty()) {
    uint64_t key;
    if (!readVarint(in, key))
      return false;
    Field f;
    f.number = key >> 3;
    f.wire = static_cast<int>(key & 7);
    if (f.number == 0 || f.number > 536870911)
      return false;
    switch (f.wire) {
    case kVarint:
      if (!readVarint(in, f.value))
        return false;
      break;
    case kFixed64:
    case kFixed32: {
      size_t width = f.wire == kFixed64 ? 8 : 4;
      if (in.size() < width)
        return false;
      std::memcpy(&f.value, in.data(), width);
      in.remove_prefix(width);
      break;
    }
    case kLen: {
      uint64_t length;
      if (!readVarint(in, length) || length > in.size())
        return false;
      std::string_view body = in.substr(0, length);
      in.remove_prefix(length);
      if (depth < 12 && !body.empty() &&
          parseMessage(body, depth + 1, f.children)) {
        f.isMessage = true;
      } else {
        f.children.clear();
        f.payload = std::string(body);
      }
      break;
    }
    default:
      return false; // groups and invalid wire types
    }
    out.push_back(std::move(f));
  }
  return true;
}

void serializeMessage(const std::vector<Field> &fields, std::string &out);

void serializeField(const Field &f, std::string &out) {
  writeVarint(out, (f.number << 3) | static_cast<uint64_t>(f.wire));
  switch (f.wire) {
  case kVarint:
    writeVarint(out, f.value);
    break;
  case kFixed64:
  case kFixed32: {
    char raw[8];
    std::memcpy(raw, &f.value, 8);
    out.append(raw, f.wire == kFixed64 ? 8 : 4);
    break;
  }
  default: {
    std::string body;
    if (f.isMessage)
      serializeMessage(f.children, body);
    else
      body = f.payload;
    writeVarint(out, body.size());
    out += body;
    break;
  }
  }
}

void serializeMessage(const std::vector<Field> &fields, std::string &out) {
  for (const Field &f : fields)
    serializeField(f, out);
}

/// Every field of the tree, with the list that holds it.
struct FieldRef {
  std::vector<Field> *siblings;
  size_t index;
  Field &get() const { return (*siblings)[index]; }
};

void collect(std::vector<Field> &fields, std::vector<FieldRef> &out) {
  for (size_t i = 0; i < fields.size(); ++i) {
    out.push_back({&fields, i});
    if (fields[i].isMessage)
      collect(fields[i].children, out);
  }
}

const uint64_t kInterestingVarints[] = {0,
                                        1,
                                        2,
                                        3,
                                        4,
                                        7,
                                        8,
                                        16,
                                        64,
                                        127,
                                        128,
                                        255,
                                        1000,
                                        65535,
                                        65536,
                                        0x7fffffffull,
                                        0x80000000ull,
                                        0xffffffffull,
                                        0x100000000ull,
                                        1ull << 40,
                                        0x7fffffffffffffffull,
                                        0x8000000000000000ull,
                                        ~0ull,       // -1 as int64
                                        ~0ull - 1,   // -2
                                        ~0ull - 63}; // -64

uint64_t doubleBits(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return bits;
}
uint64_t floatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

//===----------------------------------------------------------------------===//
// Text tokens
//===----------------------------------------------------------------------===//

enum class TokenKind { Space, Identifier, Number, String, Punct };

struct Token {
  TokenKind kind;
  size_t begin, end;
};

std::vector<Token> tokenize(const std::string &s) {
  std::vector<Token> tokens;
  size_t i = 0, n = s.size();
  while (i < n) {
    size_t start = i;
    unsigned char c = static_cast<unsigned char>(s[i]);
    TokenKind kind;
    if (std::isspace(c)) {
      while (i < n && std::isspace(static_cast<unsigned char>(s[i])))
        ++i;
      kind = TokenKind::Space;
    } else if (std::isalpha(c) || c == '_' || c == '%' || c == '@' ||
               c == '^' || c == '#' || c == '!') {
      ++i;
      while (i < n && (std::isalnum(static_cast<unsigned char>(s[i])) ||
                       s[i] == '_' || s[i] == '.' || s[i] == '$'))
        ++i;
      kind = TokenKind::Identifier;
    } else if (std::isdigit(c) ||
               (c == '-' && i + 1 < n &&
                std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      ++i;
      while (i < n &&
             (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
              ((s[i] == '-' || s[i] == '+') &&
               (s[i - 1] == 'e' || s[i - 1] == 'E'))))
        ++i;
      kind = TokenKind::Number;
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < n && s[i] != static_cast<char>(c)) {
        if (s[i] == '\\')
          ++i;
        ++i;
      }
      i = std::min(i + 1, n);
      kind = TokenKind::String;
    } else {
      ++i;
      kind = TokenKind::Punct;
    }
    tokens.push_back({kind, start, i});
  }
  return tokens;
}

const char *const kInterestingNumbers[] = {"0",
                                           "1",
                                           "-1",
                                           "2",
                                           "3",
                                           "4",
                                           "7",
                                           "64",
                                           "-2",
                                           "65536",
                                           "2147483647",
                                           "2147483648",
                                           "4294967296",
                                           "9223372036854775807",
                                           "-9223372036854775808",
                                           "18446744073709551616",
                                           "0.0",
                                           "-0.0",
                                           "0.5",
                                           "1e308",
                                           "1e-45",
                                           "nan",
                                           "inf",
                                           "-inf",
                                           "0x7fffffff",
                                           "1.0e+39"};

const char *const kPunctuation[] = {"{", "}", "[", "]", "(", ")",  "<",  ">",
                                    ":", ",", "=", "x", "?", "->", "\"", "\n"};

} // namespace

//===----------------------------------------------------------------------===//
// Mutator
//===----------------------------------------------------------------------===//

Mutator::Mutator(InputKind kind, std::vector<std::string> seedInputs,
                 uint64_t seed, size_t maxLength)
    : kind(kind), seeds(std::move(seedInputs)), maxLength(maxLength),
      rng(seed) {
  if (seeds.empty())
    seeds.push_back("");
  std::set<std::string> words;
  for (const std::string &s : seeds) {
    if (kind == InputKind::Text) {
      for (const Token &t : tokenize(s))
        if (t.kind == TokenKind::Identifier || t.kind == TokenKind::String)
          words.insert(s.substr(t.begin, t.end - t.begin));
    } else {
      std::vector<Field> fields;
      if (!parseMessage(s, 0, fields))
        continue;
      std::vector<FieldRef> refs;
      collect(fields, refs);
      for (const FieldRef &r : refs)
        if (r.get().wire == kLen && !r.get().isMessage &&
            r.get().payload.size() <= 64)
          words.insert(r.get().payload);
    }
  }
  dictionary.assign(words.begin(), words.end());
}

std::string Mutator::next() {
  std::string input = randomSeed();
  int edits = 1 + static_cast<int>(below(4));
  for (int i = 0; i < edits; ++i)
    mutateOnce(input);
  if (input.size() > maxLength)
    input.resize(maxLength);
  return input;
}

void Mutator::mutateOnce(std::string &input) {
  // Structure-aware edits most of the time: random bytes mostly test the
  // protobuf and MLIR parsers, which are not gopt's.
  for (int attempt = 0; attempt < 4; ++attempt) {
    bool done;
    if (below(10) < 7)
      done = kind == InputKind::Protobuf ? mutateProtobuf(input)
                                         : mutateText(input);
    else
      done = mutateBytes(input);
    if (done)
      return;
  }
  flipBit(input);
}

bool Mutator::flipBit(std::string &s) {
  if (s.empty())
    return insertRandomBytes(s);
  size_t i = below(s.size());
  s[i] = static_cast<char>(s[i] ^ (1u << below(8)));
  return true;
}

bool Mutator::setInterestingByte(std::string &s) {
  static const uint8_t values[] = {0, 1, 0x7f, 0x80, 0xff, 0x08, 0x0a, 0x12};
  if (s.empty())
    return false;
  s[below(s.size())] = static_cast<char>(values[below(std::size(values))]);
  return true;
}

bool Mutator::insertRandomBytes(std::string &s) {
  size_t at = below(s.size() + 1);
  size_t count = 1 + below(8);
  std::string bytes;
  for (size_t i = 0; i < count; ++i)
    bytes.push_back(static_cast<char>(below(256)));
  s.insert(at, bytes);
  return true;
}

bool Mutator::eraseRange(std::string &s) {
  if (s.empty())
    return false;
  size_t at = below(s.size());
  s.erase(at, 1 + below(std::min<size_t>(16, s.size() - at)));
  return true;
}

bool Mutator::duplicateRange(std::string &s) {
  if (s.empty())
    return false;
  size_t at = below(s.size());
  size_t count = 1 + below(std::min<size_t>(32, s.size() - at));
  s.insert(below(s.size() + 1), s.substr(at, count));
  return true;
}

bool Mutator::spliceSeed(std::string &s) {
  const std::string &other = randomSeed();
  if (other.empty())
    return false;
  size_t cut = below(s.size() + 1);
  size_t from = below(other.size());
  s = s.substr(0, cut) + other.substr(from);
  return true;
}

bool Mutator::mutateBytes(std::string &s) {
  switch (below(6)) {
  case 0:
    return flipBit(s);
  case 1:
    return setInterestingByte(s);
  case 2:
    return insertRandomBytes(s);
  case 3:
    return eraseRange(s);
  case 4:
    return duplicateRange(s);
  default:
    return spliceSeed(s);
  }
}

bool Mutator::mutateProtobuf(std::string &s) {
  std::vector<Field> fields;
  if (!parseMessage(s, 0, fields) || fields.empty())
    return false;
  std::vector<FieldRef> refs;
  collect(fields, refs);
  FieldRef ref = refs[below(refs.size())];
  Field &f = ref.get();
  switch (below(9)) {
  case 0: // a new value for a scalar field
  case 1:
    if (f.wire == kVarint) {
      if (below(3) == 0)
        f.value += below(2) ? 1 : -1;
      else
        f.value = kInterestingVarints[below(std::size(kInterestingVarints))];
    } else if (f.wire == kFixed32) {
      static const float values[] = {0.f,   -0.f, 1.f,      -1.f,     1e-45f,
                                     1e38f, NAN,  INFINITY, -INFINITY};
      f.value = floatBits(values[below(std::size(values))]);
    } else if (f.wire == kFixed64) {
      static const double values[] = {0.0, -1.0,     1e308, 1e-320,
                                      NAN, INFINITY, 2.5,   -INFINITY};
      f.value = doubleBits(values[below(std::size(values))]);
    } else if (!f.isMessage) {
      // Packed varints (dims, ints) or a string.
      std::string_view body(f.payload);
      std::vector<uint64_t> values;
      uint64_t v;
      while (!body.empty() && readVarint(body, v))
        values.push_back(v);
      if (body.empty() && !values.empty() && below(2)) {
        values[below(values.size())] =
            kInterestingVarints[below(std::size(kInterestingVarints))];
        if (below(4) == 0)
          values.erase(values.begin() + below(values.size()));
        f.payload.clear();
        for (uint64_t x : values)
          writeVarint(f.payload, x);
      } else if (!dictionary.empty() && below(2)) {
        f.payload = dictionary[below(dictionary.size())];
      } else {
        mutateBytes(f.payload);
      }
    } else {
      return false;
    }
    break;
  case 2: // drop the field
    ref.siblings->erase(ref.siblings->begin() + ref.index);
    break;
  case 3: { // repeat it
    Field copy = f;
    ref.siblings->insert(ref.siblings->begin() + ref.index, std::move(copy));
    break;
  }
  case 4: { // copy a field from elsewhere in the tree next to this one
    Field copy = refs[below(refs.size())].get();
    ref.siblings->insert(ref.siblings->begin() + ref.index, std::move(copy));
    break;
  }
  case 5: { // swap with a sibling (reorders nodes, repeated values)
    size_t other = below(ref.siblings->size());
    std::swap((*ref.siblings)[ref.index], (*ref.siblings)[other]);
    break;
  }
  case 6: // another field number
    f.number = below(2) ? f.number + 1 : 1 + below(20);
    break;
  case 7: // a string from elsewhere (node names, inputs, op types)
    if (f.wire != kLen || dictionary.empty())
      return false;
    f.isMessage = false;
    f.children.clear();
    f.payload = dictionary[below(dictionary.size())];
    break;
  default: // shrink a message to a prefix of its fields
    if (!f.isMessage || f.children.empty())
      return false;
    f.children.resize(below(f.children.size()));
    break;
  }
  std::string out;
  serializeMessage(fields, out);
  s = std::move(out);
  return true;
}

bool Mutator::mutateText(std::string &s) {
  std::vector<Token> tokens = tokenize(s);
  if (tokens.empty())
    return false;
  auto text = [&](const Token &t) {
    return s.substr(t.begin, t.end - t.begin);
  };
  auto replace = [&](const Token &t, const std::string &with) {
    s = s.substr(0, t.begin) + with + s.substr(t.end);
  };
  std::vector<size_t> numbers, words, lineStarts{0};
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].kind == TokenKind::Number)
      numbers.push_back(i);
    else if (tokens[i].kind == TokenKind::Identifier ||
             tokens[i].kind == TokenKind::String)
      words.push_back(i);
  }
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == '\n')
      lineStarts.push_back(i + 1);
  auto lineAt = [&](size_t k) {
    size_t begin = lineStarts[k];
    size_t end = k + 1 < lineStarts.size() ? lineStarts[k + 1] : s.size();
    return std::make_pair(begin, end);
  };
  switch (below(8)) {
  case 0:
  case 1: { // a number: an edge value, or off by one
    if (numbers.empty())
      return false;
    const Token &t = tokens[numbers[below(numbers.size())]];
    if (below(3) == 0) {
      long long v = std::strtoll(text(t).c_str(), nullptr, 10);
      replace(t, std::to_string(below(2) ? v + 1 : v - 1));
    } else {
      replace(t, kInterestingNumbers[below(std::size(kInterestingNumbers))]);
    }
    return true;
  }
  case 2: // an identifier or string from elsewhere
    if (words.empty() || dictionary.empty())
      return false;
    replace(tokens[words[below(words.size())]],
            dictionary[below(dictionary.size())]);
    return true;
  case 3: { // drop a token
    const Token &t = tokens[below(tokens.size())];
    replace(t, "");
    return true;
  }
  case 4: { // repeat a token
    const Token &t = tokens[below(tokens.size())];
    s.insert(t.end, text(t));
    return true;
  }
  case 5: { // insert punctuation
    const Token &t = tokens[below(tokens.size())];
    s.insert(t.begin, kPunctuation[below(std::size(kPunctuation))]);
    return true;
  }
  case 6: { // drop or repeat a line
    auto [begin, end] = lineAt(below(lineStarts.size()));
    if (below(2))
      s.erase(begin, end - begin);
    else
      s.insert(begin, s.substr(begin, end - begin));
    return true;
  }
  default: { // swap two lines, or bring one in from another seed
    auto [begin, end] = lineAt(below(lineStarts.size()));
    std::string line;
    if (below(2)) {
      auto [b2, e2] = lineAt(below(lineStarts.size()));
      line = s.substr(b2, e2 - b2);
    } else {
      const std::string &other = randomSeed();
      if (other.empty())
        return false;
      size_t from = other.rfind('\n', below(other.size()));
      from = from == std::string::npos ? 0 : from + 1;
      size_t to = other.find('\n', from);
      line = other.substr(from, to == std::string::npos ? std::string::npos
                                                        : to - from + 1);
    }
    s = s.substr(0, begin) + line + s.substr(end);
    return true;
  }
  }
}

} // namespace gopt::fuzz
