// SPDX-License-Identifier: BSD-2-Clause
// Counters described once. A component lists its counters in one table,
// a line each: the name (at once the struct member and the --stats key)
// and what it counts (the meaning docs/usage.md's counter table shows):
//
//   #define KVMMIO_FOO_COUNTERS(C) C(bars, "bars the foo saw") C(bazzes, "bazzes it refused")
//   struct FooCounters {
//     KVMMIO_FOO_COUNTERS(KVMMIO_ATOMIC_COUNTER)
//     KVMMIO_COUNTER_TABLE(KVMMIO_FOO_COUNTERS)
//   };
//
// KVMMIO_COUNTER_TABLE gives the struct `kInfo` (name and meaning, in table
// order) and `each(visit)`, which calls visit(name, value) in that order:
// what the VMM's stats output and the docs generator read. each_member()
// calls visit(name, member) instead, for a reader that must tell one
// member from another by identity rather than by its name.
#pragma once

#include <atomic>
#include <cstdint>

#include "kvmmio/base/export.h"

namespace kvmmio {

struct KVMMIO_EXPORT CounterInfo {
  const char* name;
  const char* meaning;
};

inline uint64_t counter_value(const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); }
inline uint64_t counter_value(uint64_t c) { return c; }

}  // namespace kvmmio

// Member declarations: counters bumped from several threads, or plain
// values (snapshots, settings).
#define KVMMIO_ATOMIC_COUNTER(name, meaning) std::atomic<uint64_t> name{0};
#define KVMMIO_PLAIN_COUNTER(name, meaning) uint64_t name = 0;

#define KVMMIO_COUNTER_INFO_(name, meaning) ::kvmmio::CounterInfo{#name, meaning},
#define KVMMIO_COUNTER_VISIT_(name, meaning) visit(#name, ::kvmmio::counter_value(name));
#define KVMMIO_COUNTER_VISIT_MEMBER_(name, meaning) visit(#name, name);
#define KVMMIO_COUNTER_TABLE(TABLE)                                               \
  static constexpr ::kvmmio::CounterInfo kInfo[] = {TABLE(KVMMIO_COUNTER_INFO_)}; \
  template <typename Visit>                                                       \
  void each(Visit&& visit) const {                                                \
    TABLE(KVMMIO_COUNTER_VISIT_)                                                  \
  }                                                                               \
  template <typename Visit>                                                       \
  void each_member(Visit&& visit) const {                                         \
    TABLE(KVMMIO_COUNTER_VISIT_MEMBER_)                                           \
  }
