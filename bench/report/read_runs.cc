// SPDX-License-Identifier: BSD-2-Clause
// parse_runs: one JSON object a line, checked against its kind's entry in
// kinds.h; then the checks that need the records read before (duplicates,
// contradicting meta).
#include "bench/report/read_runs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bench/report/input_error.h"
#include "bench/report/kinds.h"
#include "bench/report/micro_file.h"
#include "bench/report/record_lines.h"

namespace kvmmio::report {
namespace {

using Json = nlohmann::ordered_json;  // meta keeps the record's order

// One record being read: its members are taken one by one, and whatever
// is left at the end is an error (a misspelt member would otherwise be
// silently ignored).
class Record {
 public:
  Record(Json obj, Source at) : obj_(std::move(obj)), at_(std::move(at)) {}
  const Source& source() const { return at_; }
  [[noreturn]] void fail(const std::string& what) const { throw InputError(at_, what); }

  bool has(const char* key) const { return obj_.contains(key); }
  Json take(const char* key) {
    const auto it = obj_.find(key);
    if (it == obj_.end()) fail(std::string("\"") + key + "\" missing");
    Json v = std::move(*it);
    obj_.erase(it);
    return v;
  }
  std::string text(const char* key) {
    const Json v = take(key);
    if (!v.is_string() || v.get<std::string>().empty()) fail(std::string("\"") + key + "\" is not a non-empty string");
    return v.get<std::string>();
  }
  // A number from 0 to 2^53: counts stay exact, and sums of them convert
  // to 64-bit integers without overflow.
  double number(const char* key) {
    const Json v = take(key);
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 0x1p53))
      fail(std::string("\"") + key + "\" is not a number from 0 to 2^53");
    return v.get<double>();
  }
  // True, taking it, when KEY is null (a value that could not be read).
  bool take_null(const char* key) {
    const auto it = obj_.find(key);
    if (it == obj_.end() || !it->is_null()) return false;
    obj_.erase(it);
    return true;
  }
  // A whole number from 1 to 2^32 - 1 (MTUs, streams, payloads, repeats).
  unsigned count(const char* key) {
    const Json v = take(key);
    if (!v.is_number_unsigned() || v.get<uint64_t>() == 0 || v.get<uint64_t>() > std::numeric_limits<unsigned>::max())
      fail(std::string("\"") + key + "\" is not a whole number from 1 to 4294967295");
    return static_cast<unsigned>(v.get<uint64_t>());
  }
  void reject_rest() const {
    if (!obj_.empty()) fail("unknown member \"" + obj_.begin().key() + "\"");
  }

 private:
  Json obj_;
  Source at_;
};

void read_param(Record& rec, const std::string& name, Params& p) {
  if (name == "dir") {
    p.dir = rec.text("dir");
    // g2h and h2g between a guest and its host; a2b and b2a between two
    // guests (net-compare.sh's g2g-MODE configs).
    if (*p.dir != "g2h" && *p.dir != "h2g" && *p.dir != "a2b" && *p.dir != "b2a")
      rec.fail("\"dir\" is \"" + *p.dir + "\", not g2h, h2g, a2b or b2a");
  } else if (name == "rw") {
    p.rw = rec.text("rw");
    if (*p.rw != "read" && *p.rw != "write" && *p.rw != "randread" && *p.rw != "randwrite")
      rec.fail("\"rw\" is \"" + *p.rw + "\", not read, write, randread or randwrite");
  } else {
    (name == "mtu"       ? p.mtu
     : name == "payload" ? p.payload
     : name == "bs"      ? p.bs
     : name == "depth"   ? p.depth
                         : p.streams) = rec.count(name.c_str());
  }
}

// The counters come all together (the VMM reports all of them) or not at
// all (no VM); a partial set means a broken writer, not an absent value.
std::map<std::string, double> read_counters(Record& rec) {
  Json obj = rec.take("counters");
  if (!obj.is_object()) rec.fail("\"counters\" is not an object");
  Record c(std::move(obj), rec.source());
  std::map<std::string, double> out;
  for (const char* n : kCounterNames) {
    if (!c.has(n)) rec.fail(std::string("\"counters\" has no \"") + n + "\" (give all seven counters or none)");
    out[n] = c.number(n);
  }
  c.reject_rest();
  return out;
}

// The outside counters, likewise all together; null is "could not be
// read" (no debugfs, no VMM process), kept apart from 0. Those added later
// (kOutsideLaterNames) may be absent, from raw files written before them,
// and are then null.
std::map<std::string, std::optional<double>> read_outside(Record& rec) {
  Json obj = rec.take("outside");
  if (!obj.is_object()) rec.fail("\"outside\" is not an object");
  Record c(std::move(obj), rec.source());
  std::map<std::string, std::optional<double>> out;
  for (const char* n : kOutsideNames) {
    const bool later = std::find_if(std::begin(kOutsideLaterNames), std::end(kOutsideLaterNames),
                                    [&](const char* l) { return std::string_view(l) == n; }) !=
                       std::end(kOutsideLaterNames);
    if (!c.has(n)) {
      if (later) {
        out[n] = std::nullopt;
        continue;
      }
      static_assert(std::size(kOutsideNames) == 7 && std::size(kOutsideLaterNames) == 1, "the message names them");
      rec.fail(std::string("\"outside\" has no \"") + n +
               "\" (give all seven, null where unreadable; only vmm_cpu_ms, added later, may be left out)");
    }
    out[n] = c.take_null(n) ? std::nullopt : std::optional<double>(c.number(n));
  }
  c.reject_rest();
  return out;
}

// A run's identity but for the attempt: the records of a run tried more
// than once share it, one record per attempt.
bool same_run(const Run& a, const Run& b) { return run_identity(a) == run_identity(b); }

// "attempt" and "outcome" come together (net-compare.sh writes both on
// every record of a retried run), and the outcome must agree with
// "failed": a record saying both "ok" and why it failed is a broken writer.
// Returns whether the record has them.
bool read_attempt(Record& rec, Run& r) {
  if (!rec.has("attempt") && !rec.has("outcome")) return false;
  if (!rec.has("outcome")) rec.fail("\"attempt\" without \"outcome\"");
  if (!rec.has("attempt")) rec.fail("\"outcome\" without \"attempt\"");
  r.attempt = rec.count("attempt");
  const std::string outcome = rec.text("outcome");
  if (outcome != "ok" && outcome != "failed") rec.fail("\"outcome\" is \"" + outcome + "\", not ok or failed");
  if (outcome == "failed" && !r.failed) rec.fail("\"outcome\" is \"failed\" but \"failed\" gives no reason");
  if (outcome == "ok" && r.failed) rec.fail("\"outcome\" is \"ok\" but the record has \"failed\"");
  return true;
}

// The run's other records (attempts) read so far: none the same attempt,
// and every attempt below the highest failed, since a run is tried again
// only after a failure and is judged by its last attempt.
void check_attempts(const Record& rec, const Run& r, bool attempted, const RawData& into) {
  for (const Run& o : into.runs) {
    if (!same_run(o, r)) continue;
    if (o.attempt == r.attempt)
      rec.fail((attempted ? "attempt " + std::to_string(r.attempt) + " of this " : std::string()) + r.kind +
               " run already given at " + o.source.str());
    if (o.attempt < r.attempt && !o.failed)
      rec.fail("attempt " + std::to_string(r.attempt) + " of a run whose attempt " + std::to_string(o.attempt) +
               " at " + o.source.str() + " did not fail (only the last attempt may succeed)");
    if (o.attempt > r.attempt && !r.failed)
      rec.fail("attempt " + std::to_string(r.attempt) + " did not fail, but the run has attempt " +
               std::to_string(o.attempt) + " at " + o.source.str() + " (only the last attempt may succeed)");
  }
}

void add_run(const KindSpec& kind, Record& rec, RawData& into) {
  Run r;
  r.source = rec.source();
  r.kind = kind.name;
  r.config = rec.text("config");
  if (rec.has("failed")) r.failed = rec.text("failed");
  const bool attempted = read_attempt(rec, r);
  if (!r.failed || rec.has("rep")) r.rep = rec.count("rep");
  for (const char* p : kind.params)
    if (!r.failed || rec.has(p)) read_param(rec, p, r.params);
  // What a failed run managed to measure is not used, but it is allowed.
  for (const char* v : kind.values)
    if (!r.failed || rec.has(v)) {
      const double x = rec.number(v);
      if (!r.failed) r.values[v] = x;
    }
  if (kind.amount && rec.has("counters")) r.counters = read_counters(rec);
  if (kind.amount && rec.has("outside")) r.outside = read_outside(rec);
  rec.reject_rest();
  if (r.values.count("sent")) {
    // udp_pps accounts every datagram sent as received or lost.
    if (r.values["received"] + r.values["lost"] != r.values["sent"]) rec.fail("received + lost is not sent");
    if (r.values["sent"] > 0) r.values["loss_pct"] = 100 * r.values["lost"] / r.values["sent"];
  }
  check_attempts(rec, r, attempted, into);
  into.runs.push_back(std::move(r));
}

// The whole file, or nothing if it is not a readable regular file.
std::optional<std::string> read_whole(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return s.str();
}

void add_micro(Record& rec, const std::string& base_dir, RawData& into) {
  MicroResult m;
  m.source = rec.source();
  m.platform = rec.text("platform");
  m.file = rec.text("file");
  rec.reject_rest();
  for (const MicroResult& o : into.micro)
    if (o.platform == m.platform) rec.fail("micro platform " + m.platform + " already given at " + o.source.str());
  const std::filesystem::path p(m.file);
  const std::string path = p.is_absolute() ? m.file : (std::filesystem::path(base_dir) / p).string();
  const std::optional<std::string> text = read_whole(path);
  if (!text) rec.fail("cannot read " + path);
  try {
    read_micro_json(*text, m);
  } catch (const std::runtime_error& e) {
    rec.fail(path + ": " + e.what());
  }
  into.micro.push_back(std::move(m));
}

void add_meta(const Json& obj, const Source& at, RawData& into) {
  for (const auto& [key, v] : obj.items()) {
    if (key == "kind") continue;
    if (!v.is_string() && !v.is_number()) throw InputError(at, "meta \"" + key + "\" is not a string or number");
    const std::string value = v.is_string() ? v.get<std::string>() : v.dump();
    bool seen = false;
    for (const MetaEntry& o : into.meta) {
      if (o.key != key) continue;
      // Merged files must describe the same set-up, or the cells would mix
      // measurements of different machines.
      if (o.value != value)
        throw InputError(at, "meta " + key + "=" + value + " contradicts " + key + "=" + o.value + " at " + o.source.str());
      seen = true;
    }
    if (!seen) into.meta.push_back({at, key, value});
  }
}

// "meta, micro, iperf, ... or LAST": the kinds a record may have, from
// kinds.h, so that the message names a kind as soon as it is added.
std::string expected_kinds() {
  std::string out = "meta, micro";
  for (size_t i = 0; i < kinds().size(); ++i)
    out += std::string(i + 1 < kinds().size() ? ", " : " or ") + kinds()[i].name;
  return out;
}

void add_line(std::string_view line, const Source& at, const std::string& base_dir, RawData& into) {
  Json obj = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded()) throw InputError(at, "not JSON");
  if (!obj.is_object()) throw InputError(at, "not a JSON object");
  Record rec(obj, at);
  const std::string kind = rec.text("kind");
  if (kind == "meta") return add_meta(obj, at, into);
  if (kind == "micro") return add_micro(rec, base_dir, into);
  const KindSpec* spec = find_kind(kind);
  if (!spec) throw InputError(at, "unknown kind \"" + kind + "\" (expected " + expected_kinds() + ")");
  add_run(*spec, rec, into);
}

}  // namespace

void parse_runs(std::string_view text, const std::string& name, const std::string& base_dir, RawData& into) {
  // What the file says, whatever its blank lines: a file given twice is
  // refused rather than pooled with itself.
  std::string records;
  for_each_record_line(text, [&](std::string_view line, int) { records.append(line).push_back('\n'); });
  if (!records.empty())
    for (const auto& [earlier, its_records] : into.files)
      if (its_records == records)
        throw InputError(name + ": the same records as " + earlier +
                         ": one file given twice? (each raw file is one boot's runs, and runs of "
                         "different files pool)");
  into.files.emplace_back(name, std::move(records));
  for_each_record_line(text, [&](std::string_view line, int number) {
    add_line(line, Source{name, number}, base_dir, into);
  });
}

void read_runs_file(const std::string& path, RawData& into) {
  const std::optional<std::string> text = read_whole(path);
  if (!text) throw InputError(path + ": cannot read the raw file");
  parse_runs(*text, path, std::filesystem::path(path).parent_path().string(), into);
}

}  // namespace kvmmio::report
