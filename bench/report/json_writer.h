// A pretty-printing JSON writer: one member or element a line, two-space
// indent. The caller opens and closes; the writer places commas, quotes and
// escapes, and writes absent optionals as null.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvmmio::report {

class JsonWriter {
 public:
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  JsonWriter& key(std::string_view name);  // inside an object, before its value

  void string(std::string_view s);
  void number(double v);  // shortest text that reads back as v; null if not finite
  void integer(uint64_t v);
  void null();
  void number(const std::optional<double>& v) { v ? number(*v) : null(); }

  // The document, with a final newline. The writer must be back at the top.
  std::string finish();

 private:
  void before_value();
  void close(char bracket);
  void append_quoted(std::string_view s);

  struct Level {
    bool object;
    bool empty = true;
  };
  std::string out_;
  std::vector<Level> open_;
  bool after_key_ = false;
};

}  // namespace kvmmio::report
