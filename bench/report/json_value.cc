// parse_json: a recursive-descent JSON reader. Depth is bounded so that a
// hostile file cannot exhaust the stack.
#include "bench/report/json_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace kvmmio::report {
namespace {

constexpr int kMaxDepth = 64;

class Reader {
 public:
  explicit Reader(std::string_view text) : s_(text) {}

  JsonValue document() {
    JsonValue v = value(0);
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    int line = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) line += s_[i] == '\n';
    throw std::runtime_error("line " + std::to_string(line) + ": " + what);
  }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool consume(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "'");
  }

  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  JsonValue value(int depth) {
    if (depth > kMaxDepth) fail("nested too deeply");
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end of text");
    const char c = s_[pos_];
    if (c == '{') return JsonValue{object(depth)};
    if (c == '[') return JsonValue{array(depth)};
    if (c == '"') return JsonValue{string()};
    if (literal("null")) return JsonValue{nullptr};
    if (literal("true")) return JsonValue{true};
    if (literal("false")) return JsonValue{false};
    return JsonValue{number()};
  }

  JsonObject object(int depth) {
    expect('{');
    JsonObject out;
    if (consume('}')) return out;
    do {
      skip_space();
      std::string key = string();
      expect(':');
      out.emplace_back(std::move(key), value(depth + 1));
    } while (consume(','));
    expect('}');
    return out;
  }

  JsonArray array(int depth) {
    expect('[');
    JsonArray out;
    if (consume(']')) return out;
    do {
      out.push_back(value(depth + 1));
    } while (consume(','));
    expect(']');
    return out;
  }

  double number() {
    // JSON's grammar is stricter than from_chars: no leading '+', no "inf".
    const size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') fail("expected a value");
    while (pos_ < s_.size() && std::string_view("0123456789.eE+-").find(s_[pos_]) != std::string_view::npos) ++pos_;
    double out = 0;
    const auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + pos_, out);
    if (ec != std::errc() || end != s_.data() + pos_ || !std::isfinite(out)) fail("malformed number");
    return out;
  }

  std::string string() {
    if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string");
    ++pos_;
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated string");
      const char e = s_[pos_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': out += utf8(hex4()); break;
        default: fail("unknown escape in a string");
      }
    }
  }

  unsigned hex4() {
    unsigned cp = 0;
    const auto [end, ec] = std::from_chars(s_.data() + pos_, s_.data() + std::min(pos_ + 4, s_.size()), cp, 16);
    if (ec != std::errc() || end != s_.data() + pos_ + 4) fail("malformed \\u escape");
    pos_ += 4;
    return cp;
  }

  // Basic multilingual plane only: the files this reads are ASCII, and a
  // surrogate pair is reported rather than mis-decoded.
  std::string utf8(unsigned cp) {
    if (cp >= 0xd800 && cp <= 0xdfff) fail("surrogate \\u escapes are not supported");
    std::string out;
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
    return out;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

template <typename T>
const T& as(const JsonValue& j, const char* name) {
  if (const T* p = std::get_if<T>(&j.v)) return *p;
  throw std::runtime_error(std::string("JSON value is not ") + name);
}

}  // namespace

double JsonValue::number() const { return as<double>(*this, "a number"); }
const std::string& JsonValue::string() const { return as<std::string>(*this, "a string"); }
const JsonArray& JsonValue::array() const { return as<JsonArray>(*this, "an array"); }
const JsonObject& JsonValue::object() const { return as<JsonObject>(*this, "an object"); }

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& [k, member] : object())
    if (k == key) return &member;
  return nullptr;
}

const JsonValue& JsonValue::operator[](std::string_view key) const {
  if (const JsonValue* m = find(key)) return *m;
  throw std::runtime_error("JSON object has no member \"" + std::string(key) + "\"");
}

const JsonValue& JsonValue::operator[](size_t index) const {
  const JsonArray& a = array();
  if (index >= a.size()) throw std::runtime_error("JSON array index " + std::to_string(index) + " out of range");
  return a[index];
}

JsonValue parse_json(std::string_view text) { return Reader(text).document(); }

}  // namespace kvmmio::report
