// SPDX-License-Identifier: BSD-2-Clause
// FdtWriter over libfdt's sequential-write functions.
#include "vmm/boot/fdt_writer.h"

#include <libfdt.h>

#include <algorithm>
#include <exception>

namespace kvmmio::vmm {
namespace {

std::string describe(const std::string& what, int err) {
  return "device tree: " + what + " failed: " + fdt_strerror(err);
}

// The device tree is big-endian.
void put_be32(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(static_cast<uint8_t>(v >> 24));
  out.push_back(static_cast<uint8_t>(v >> 16));
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}

// A tree many times larger than any kvmmio builds: a runaway loop, not a
// need for more space.
constexpr size_t kMaxSize = size_t{16} << 20;

}  // namespace

template <typename Call>
void FdtWriter::call(const std::string& what, Call&& fn) {
  if (finished_) throw FdtError("device tree: " + what + " after finish()");
  for (;;) {
    const int err = fn(buf_.data());
    if (err >= 0) return;
    if (err != -FDT_ERR_NOSPACE || buf_.size() >= kMaxSize) throw FdtError(describe(what, err));
    // fdt_resize moves the tree into the new buffer; it may not overlap the
    // old one, hence the copy-then-swap.
    std::vector<uint8_t> bigger(buf_.size() * 2);
    const int r = fdt_resize(buf_.data(), bigger.data(), static_cast<int>(bigger.size()));
    if (r < 0) throw FdtError(describe("fdt_resize", r));
    buf_.swap(bigger);
  }
}

FdtWriter::FdtWriter(size_t initial_size) : buf_(std::max<size_t>(initial_size, 1024)) {
  call("fdt_create", [&](void* fdt) { return fdt_create(fdt, static_cast<int>(buf_.size())); });
  // No /memreserve/ entries: Linux reserves the DTB itself, and the initrd
  // through /chosen.
  call("fdt_finish_reservemap", [](void* fdt) { return fdt_finish_reservemap(fdt); });
}

FdtWriter::Node FdtWriter::begin_node(const std::string& name) {
  call("fdt_begin_node(\"" + name + "\")",
       [&](void* fdt) { return fdt_begin_node(fdt, name.c_str()); });
  ++open_nodes_;
  return Node(*this, name);
}

void FdtWriter::end_node(const std::string& name) noexcept {
  --open_nodes_;
  try {
    call("fdt_end_node(\"" + name + "\")", [](void* fdt) { return fdt_end_node(fdt); });
  } catch (const std::exception& e) {
    if (deferred_error_.empty()) deferred_error_ = e.what();
  }
}

FdtWriter::Node::Node(FdtWriter& writer, std::string name)
    : writer_(&writer), name_(std::move(name)), uncaught_(std::uncaught_exceptions()) {}

FdtWriter::Node::~Node() {
  if (!writer_) return;
  if (std::uncaught_exceptions() > uncaught_) return;  // the tree is being abandoned
  writer_->end_node(name_);
}

void FdtWriter::property(const std::string& name, std::span<const uint8_t> value) {
  call("fdt_property(\"" + name + "\")", [&](void* fdt) {
    return fdt_property(fdt, name.c_str(), value.data(), static_cast<int>(value.size()));
  });
}

void FdtWriter::property_empty(const std::string& name) { property(name, {}); }

void FdtWriter::property_string(const std::string& name, const std::string& value) {
  property(name, {reinterpret_cast<const uint8_t*>(value.c_str()), value.size() + 1});
}

void FdtWriter::property_strings(const std::string& name,
                                 std::initializer_list<std::string> values) {
  std::vector<uint8_t> bytes;
  for (const auto& v : values) {
    bytes.insert(bytes.end(), v.begin(), v.end());
    bytes.push_back(0);
  }
  property(name, bytes);
}

void FdtWriter::property_u32(const std::string& name, uint32_t value) {
  property_cells(name, {value});
}

void FdtWriter::property_u64(const std::string& name, uint64_t value) {
  property_cells(name, {hi32(value), lo32(value)});
}

void FdtWriter::property_cells(const std::string& name, std::span<const uint32_t> cells) {
  std::vector<uint8_t> bytes;
  bytes.reserve(cells.size() * 4);
  for (uint32_t c : cells) put_be32(bytes, c);
  property(name, bytes);
}

std::vector<uint8_t> FdtWriter::finish() {
  if (!deferred_error_.empty()) throw FdtError(deferred_error_);
  if (open_nodes_ != 0)
    throw FdtError("device tree: finish() with " + std::to_string(open_nodes_) + " node(s) open");
  call("fdt_finish", [](void* fdt) { return fdt_finish(fdt); });
  finished_ = true;
  std::vector<uint8_t> blob(buf_.begin(), buf_.begin() + fdt_totalsize(buf_.data()));
  return blob;
}

}  // namespace kvmmio::vmm
