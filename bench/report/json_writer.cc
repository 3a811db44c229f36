// JsonWriter.
#include "bench/report/json_writer.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace kvmmio::report {

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) return;
  if (open_.back().object) throw std::logic_error("JsonWriter: object member without a key");
  out_ += open_.back().empty ? "\n" : ",\n";
  open_.back().empty = false;
  out_.append(2 * open_.size(), ' ');
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (open_.empty() || !open_.back().object || after_key_) throw std::logic_error("JsonWriter: key outside an object");
  out_ += open_.back().empty ? "\n" : ",\n";
  open_.back().empty = false;
  out_.append(2 * open_.size(), ' ');
  append_quoted(name);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

void JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  open_.push_back({true});
}

void JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  open_.push_back({false});
}

void JsonWriter::close(char bracket) {
  const bool want_object = bracket == '}';
  if (open_.empty() || open_.back().object != want_object || after_key_)
    throw std::logic_error("JsonWriter: unbalanced close");
  const bool empty = open_.back().empty;
  open_.pop_back();
  if (!empty) {
    out_ += '\n';
    out_.append(2 * open_.size(), ' ');
  }
  out_ += bracket;
}

void JsonWriter::end_object() { close('}'); }
void JsonWriter::end_array() { close(']'); }

void JsonWriter::string(std::string_view s) {
  before_value();
  append_quoted(s);
}

void JsonWriter::append_quoted(std::string_view s) {
  out_ += '"';
  static constexpr char kHex[] = "0123456789abcdef";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out_ += '\\';
      out_ += ch;
    } else if (c < 0x20) {
      // \u00XX covers every control character; no shorter forms needed.
      out_ += "\\u00";
      out_ += kHex[c >> 4];
      out_ += kHex[c & 0xf];
    } else {
      out_ += ch;
    }
  }
  out_ += '"';
}

void JsonWriter::number(double v) {
  if (!std::isfinite(v)) return null();
  before_value();
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, end);
}

void JsonWriter::integer(uint64_t v) {
  before_value();
  out_ += std::to_string(v);
}

void JsonWriter::null() {
  before_value();
  out_ += "null";
}

std::string JsonWriter::finish() {
  if (!open_.empty() || after_key_) throw std::logic_error("JsonWriter: document not closed");
  return out_ + "\n";
}

}  // namespace kvmmio::report
