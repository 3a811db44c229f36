// SPDX-License-Identifier: BSD-2-Clause
// FdtWriter: a flattened device tree built with libfdt's sequential-write
// API (fdt_create ... fdt_finish), wrapped so that a node cannot be left
// open and a libfdt error cannot pass unnoticed.
//
//   FdtWriter fdt;
//   {
//     auto root = fdt.begin_node("");          // ended when `root` goes
//     fdt.property_string("compatible", "linux,dummy-virt");
//   }
//   std::vector<uint8_t> blob = fdt.finish();
//
// Errors throw FdtError naming the libfdt call, the node or property, and
// libfdt's error. The buffer grows by itself (fdt_resize) when libfdt runs
// out of space.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kvmmio::vmm {

class FdtError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FdtWriter {
 public:
  class Node;

  explicit FdtWriter(size_t initial_size = 4096);
  FdtWriter(const FdtWriter&) = delete;
  FdtWriter& operator=(const FdtWriter&) = delete;

  // Opens a child of the innermost open node ("" is the root). The node is
  // ended when the returned guard is destroyed.
  [[nodiscard]] Node begin_node(const std::string& name);

  void property(const std::string& name, std::span<const uint8_t> value);
  void property_empty(const std::string& name);
  void property_string(const std::string& name, const std::string& value);
  // A string list: each string NUL-terminated, back to back.
  void property_strings(const std::string& name, std::initializer_list<std::string> values);
  void property_u32(const std::string& name, uint32_t value);
  void property_u64(const std::string& name, uint64_t value);
  // 32-bit big-endian cells, the device tree's unit for reg, interrupts, ...
  void property_cells(const std::string& name, std::span<const uint32_t> cells);
  void property_cells(const std::string& name, std::initializer_list<uint32_t> cells) {
    property_cells(name, std::span<const uint32_t>(cells.begin(), cells.size()));
  }

  // Ends the tree and returns the blob (exactly totalsize bytes). Throws if
  // a node is still open or an error happened while ending one.
  std::vector<uint8_t> finish();

  // Ends a node, then closes the scope of the guard.
  class Node {
   public:
    Node(Node&& other) noexcept
        : writer_(std::exchange(other.writer_, nullptr)),
          name_(std::move(other.name_)),
          uncaught_(other.uncaught_) {}
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;
    Node& operator=(Node&&) = delete;
    // Does not throw: a failure to end the node is remembered and thrown
    // by finish(). Skipped while an exception unwinds the tree anyway.
    ~Node();

   private:
    friend class FdtWriter;
    Node(FdtWriter& writer, std::string name);
    FdtWriter* writer_;
    std::string name_;
    int uncaught_;
  };

 private:
  // Runs a libfdt call, growing the buffer and retrying on FDT_ERR_NOSPACE;
  // other errors throw FdtError with `what`.
  template <typename Call>
  void call(const std::string& what, Call&& fn);
  void end_node(const std::string& name) noexcept;

  std::vector<uint8_t> buf_;
  int open_nodes_ = 0;
  bool finished_ = false;
  std::string deferred_error_;
};

// Big-endian 32-bit cells of a 64-bit value (two cells: high, low).
inline uint32_t hi32(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
inline uint32_t lo32(uint64_t v) { return static_cast<uint32_t>(v); }

}  // namespace kvmmio::vmm
