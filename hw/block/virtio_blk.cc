// SPDX-License-Identifier: BSD-2-Clause
// VirtioBlock: features, configuration, the queues and their completions (see
// the header).
#include "kvmmio/block/virtio_blk.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "block_io.h"
#include "disk_words.h"
#include "io_worker.h"
#include "kvmmio/base/error.h"
#include "uring_worker.h"
#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::block {
namespace {

constexpr uint64_t bit(unsigned n) { return uint64_t{1} << n; }

const char* request_name(uint32_t type) {
  switch (type) {
    case spec::kTIn: return "read";
    case spec::kTOut: return "write";
    case spec::kTFlush: return "flush";
    case spec::kTDiscard: return "discard";
    case spec::kTWriteZeroes: return "write-zeroes";
    default: return "request";
  }
}

}  // namespace

// One request queue: its drain, its bounds, its engine. The drain and
// `resume` are under the device lock; the bounce buffer is the engine
// thread's. The held counts go up under the device lock and down on the
// engine's thread, which takes the lock only when the drain waits for
// them (`waiting_for_slot`) or to complete a current request.
struct VirtioBlock::Queue {
  Queue(VirtioBlock& device, uint16_t queue_index)
      : index(queue_index), drain([&device, this] {
          ++device.counters_.budget_yields;
          if (resume) resume->schedule();
        }) {}
  // A request given back (completed, or dropped after a reset): true if
  // the drain waits for it.
  bool release(uint64_t cost) {
    held_bytes -= cost;
    --held;
    return waiting_for_slot.load();
  }

  const uint16_t index;
  virtio::QueueDrain drain;
  std::unique_ptr<DeferredWork> resume;  // the drain past its budget
  // Handed to the engine and not yet given back, of any activation.
  std::atomic<unsigned> held{0};
  std::atomic<uint64_t> held_bytes{0};
  // Paused at a bound. Set before the held counts are looked at again and
  // read after they went down (both sequentially consistent), so either
  // the drain sees the room or the one who made it sees the flag.
  std::atomic<bool> waiting_for_slot{false};
  std::unique_ptr<BounceBuffer> bounce;      // O_DIRECT only; the engine thread's
  std::unique_ptr<IoEngine> engine;          // last: stopped first
};

VirtioBlock::VirtioBlock(const GuestMemory& memory, EventLoop& loop, DiskImage disk, BlockDeviceOptions options)
    : memory_(memory), loop_(loop), disk_(std::move(disk)), options_(std::move(options)) {
  if (options_.queues < 1 || options_.queues > kMaxQueues)
    throw std::invalid_argument("VirtioBlock: queues must be 1 to " + std::to_string(kMaxQueues));
  limits_.capacity_sectors = disk_.capacity_sectors();
  limits_.alignment = disk_.alignment();
  limits_.seg_max = kSegMax;
  limits_.max_request_bytes = kMaxRequestBytes;
  limits_.max_range_sectors = kMaxRangeSectors;
  limits_.read_only = disk_.read_only();
  limits_.discard = disk_.can_discard();
  limits_.write_zeroes = disk_.can_write_zeroes();
  settings_.capacity_sectors = limits_.capacity_sectors;
  settings_.read_only = limits_.read_only;
  settings_.cache_none = disk_.direct();
  settings_.block_size = limits_.alignment;
  settings_.discard_offered = limits_.discard;
  settings_.write_zeroes_offered = limits_.write_zeroes;
  settings_.queues = options_.queues;
  settings_.max_in_flight = kMaxInFlight;
  settings_.max_in_flight_bytes = kMaxInFlightBytes;
  settings_.max_request_bytes = kMaxRequestBytes;
  for (unsigned i = 0; i < options_.queues; ++i) {
    queues_.push_back(std::make_unique<Queue>(*this, static_cast<uint16_t>(i)));
    if (disk_.direct()) queues_.back()->bounce = std::make_unique<BounceBuffer>();
  }
  make_engines();
  settings_.io_uring = std::string_view(queues_.front()->engine->name()) == "io_uring";
}

std::string VirtioBlock::engine_thread_name(const Queue& q) const {
  if (queues_.size() == 1) return options_.thread_name;  // a 1-queue disk's thread keeps the plain name
  return options_.thread_name + "q" + std::to_string(q.index);
}

std::unique_ptr<IoEngine> VirtioBlock::make_uring_engine(Queue& q, std::string& why) {
  UringWorker::Hooks hooks{
      .on_start = [this] { on_io_thread_start(options_.on_uring_thread_start); },
      .refused = [this] { return confine_failed_.load(); },
      .current = [this](const IoJob& job) { return current(job); },
      .execute = [this](const IoJob& job) { return execute(job); },
      .count = [this](const BlockRequest& r, int error) { count(r, error); },
      .complete = [this](const IoJob& job, const IoOutcome& out, bool more) {
        complete_request(job, out.written, more);
      },
      .before_io = options_.before_io,
      .submit_fault = options_.uring_submit_fault,
  };
  return UringWorker::create(engine_thread_name(q), memory_, disk_, std::move(hooks), why);
}

std::unique_ptr<IoEngine> VirtioBlock::make_threads_engine(Queue& q) {
  return std::make_unique<IoWorker>(
      engine_thread_name(q), [this] { on_io_thread_start(options_.on_io_thread_start); },
      [this](const IoJob& job) { return current(job); }, [this](const IoJob& job) { return execute(job); },
      [this](const IoJob& job, const IoOutcome& out, bool more) { complete_request(job, out.written, more); });
}

// Every queue gets the same engine: io_uring for all, or threads for all
// (a ring refused for one queue is a fallback for the whole disk).
void VirtioBlock::make_engines() {
  if (options_.engine != EngineChoice::kThreads) {
    std::string why;
    bool all = true;
    for (auto& q : queues_) {
      q->engine = make_uring_engine(*q, why);
      if (!q->engine) {
        all = false;
        break;
      }
    }
    if (all) return;
    for (auto& q : queues_) q->engine.reset();
    if (options_.engine == EngineChoice::kIoUring)
      throw UserError(disk_named(disk_.words(), disk_.path(), DiskSetting::kEngineIoUring) +
                      ": the io_uring ring cannot be set up (" + why + "); " +
                      disk_ask(disk_.words(), DiskSetting::kEngineThreads, disk_.path()) +
                      ", or allow io_uring (kernel.io_uring_disabled=0, a seccomp profile that permits "
                      "io_uring_setup)");
    KVMMIO_LOG_WARN("virtio-blk %s: io_uring unavailable (%s); using the threads engine", disk_.path().c_str(),
                    why.c_str());
  }
  for (auto& q : queues_) q->engine = make_threads_engine(*q);
}

IoOutcome VirtioBlock::execute(const IoJob& job) {
  IoOutcome out{spec::kSIoErr, 1, EPERM};
  if (!confine_failed_) {
    if (options_.before_io) options_.before_io(job.request);
    out = execute_request(memory_, disk_, options_.serial, job.chain, job.request, queues_[job.queue]->bounce.get());
    count(job.request, out.error);
  }
  // A reset during the I/O: the chain is no longer the device's to answer.
  if (current(job)) write_status(memory_, job.chain, job.request.status_offset, out.status);
  return out;
}

bool VirtioBlock::current(const IoJob& job) const { return job.generation == generation_.load(); }

const char* VirtioBlock::engine_name() const { return queues_.front()->engine->name(); }

unsigned VirtioBlock::requests_in_flight() const {
  unsigned n = 0;
  for (const auto& q : queues_) n += q->held.load();
  return n;
}

unsigned VirtioBlock::requests_in_flight(uint32_t queue) const {
  return queue < queues_.size() ? queues_[queue]->held.load() : 0;
}

uint64_t VirtioBlock::bytes_in_flight(uint32_t queue) const {
  return queue < queues_.size() ? queues_[queue]->held_bytes.load() : 0;
}

VirtioBlock::~VirtioBlock() {
  abandon_ = true;
  // Joins every engine's thread, after the I/O the kernel still holds (at
  // most kMaxInFlightBytes a queue): nothing runs for the device after
  // this. Not under the device lock (the transport, which owns it, is gone).
  for (auto& q : queues_) q->engine.reset();
}

void VirtioBlock::on_io_thread_start(const std::function<void()>& confine) {
  if (!confine) return;
  try {
    confine();
  } catch (const std::exception& e) {
    // Unconfined I/O is not done: every request is answered IOERR.
    KVMMIO_LOG_ERROR("virtio-blk %s: the I/O thread cannot confine itself (%s); requests fail",
                     disk_.path().c_str(), e.what());
    confine_failed_ = true;
  }
}

uint64_t VirtioBlock::device_features() const {
  uint64_t f = bit(spec::kFSizeMax) | bit(spec::kFSegMax) | bit(spec::kFBlkSize) | bit(spec::kFFlush);
  // Only with several queues: a 1-queue disk offers what it always did.
  if (queues_.size() > 1) f |= bit(spec::kFMq);
  if (limits_.read_only) f |= bit(spec::kFRo);
  if (limits_.discard) f |= bit(spec::kFDiscard);
  if (limits_.write_zeroes) f |= bit(spec::kFWriteZeroes);
  return f;
}

uint32_t VirtioBlock::config_size() const { return spec::kConfigBytes; }

void VirtioBlock::read_config(uint32_t offset, std::span<uint8_t> data) {
  spec::BlockConfig c{};
  c.capacity = limits_.capacity_sectors;
  c.size_max = kSizeMax;
  c.seg_max = kSegMax;
  c.blk_size = limits_.alignment;
  c.num_queues = static_cast<uint16_t>(queues_.size());
  const uint32_t align_sectors = limits_.alignment / spec::kSectorSize;
  if (limits_.discard) {
    c.max_discard_sectors = kMaxRangeSectors;
    c.max_discard_seg = 1;
    c.discard_sector_alignment = align_sectors;
  }
  if (limits_.write_zeroes) {
    c.max_write_zeroes_sectors = kMaxRangeSectors;
    c.max_write_zeroes_seg = 1;
    c.write_zeroes_may_unmap = limits_.discard ? 1 : 0;
  }
  std::memcpy(data.data(), reinterpret_cast<const uint8_t*>(&c) + offset, data.size());
}

void VirtioBlock::visit_counters(const virtio::CounterVisitor& visit) const {
  settings_.each(visit);
  counters_.each(visit);
}

bool VirtioBlock::activate(const virtio::DeviceActivation& activation) {
  try {
    for (auto& q : queues_) {
      Queue* queue = q.get();
      q->resume = std::make_unique<DeferredWork>(loop_, *activation.lock, [this, queue] { process(*queue); });
    }
  } catch (const std::exception& e) {
    for (auto& q : queues_) q->resume.reset();
    KVMMIO_LOG_ERROR("virtio-blk: cannot start: %s", e.what());
    return false;
  }
  lock_ = activation.lock;
  interrupt_ = activation.interrupt;
  for (auto& q : queues_) {
    q->drain.unbind();  // a queue the driver did not make ready stays unbound (its notifies do nothing)
    q->waiting_for_slot = false;
  }
  for (const auto& a : activation.queues)
    if (a.index < queues_.size()) queues_[a.index]->drain.bind(a.ring, interrupt_);
  abandon_ = false;
  ++counters_.activations;
  return true;
}

// A queue made ready after DRIVER_OK (go_live): served from now on.
void VirtioBlock::enable_queue(const virtio::ActiveQueue& queue) {
  if (queue.index < queues_.size() && queue.ring && interrupt_)
    queues_[queue.index]->drain.bind(queue.ring, interrupt_);
}

void VirtioBlock::reset() {
  ++generation_;    // the engines start nothing of the old activation and discard what ends
  abandon_ = true;  // a completion waiting for our lock gives up
  for (auto& q : queues_) {
    // The jobs not started: their budget back now. Those running keep
    // theirs until they end (release()).
    const Dropped d = q->engine->cancel();
    q->held_bytes -= d.bytes;
    q->held -= d.jobs;
  }
  // Completions that saw abandon_ clear may still be waiting for the lock
  // we hold: they give up within a millisecond, and then nothing touches
  // the lock until the next activation.
  for (unsigned n; (n = completing_.load()) != 0;) completing_.wait(n);
  for (auto& q : queues_) {
    q->resume.reset();
    q->drain.unbind();
    q->waiting_for_slot = false;
  }
  interrupt_ = nullptr;
}

void VirtioBlock::queue_notify(uint32_t queue) {
  if (queue < queues_.size()) process(*queues_[queue]);
}

void VirtioBlock::process(Queue& q) {
  if (q.waiting_for_slot) return;  // the next completion on this queue resumes the drain
  q.drain.run({.chains = kChainsPerDispatch}, [this, &q](const virtio::DescriptorChain& chain, uint64_t) {
    return take(q, chain);
  });
}

// One chain: answered now if the checks refuse it, else handed to the
// queue's engine.
virtio::ChainStep VirtioBlock::take(Queue& q, const virtio::DescriptorChain& chain) {
  const ParsedRequest parsed = parse_request(memory_, chain, limits_);
  if (!parsed.request) {
    ++counters_.refused;
    errors_.report("%s (request type %u, queue %u)", parsed.error, parsed.type, unsigned{q.index});
    if (!parsed.status_offset) return virtio::ChainStep::used(0);
    write_status(memory_, chain, *parsed.status_offset, parsed.status);
    return virtio::ChainStep::used(1);
  }
  const BlockRequest& r = *parsed.request;
  // Only IN/OUT move guest data; a DISCARD's range is no buffer.
  const uint64_t cost = r.type == spec::kTIn || r.type == spec::kTOut ? r.data_bytes : 0;
  if (!admit(q, cost)) return virtio::ChainStep::paused();
  q.engine->submit(IoJob{generation_.load(), q.index, chain, r, cost});
  return virtio::ChainStep::kept();
}

// Room for one more request of `cost` bytes on `q`: taken (true), or the
// drain pauses until a request is given back (false). A request never
// costs more than kMaxRequestBytes, so an empty queue always has room.
bool VirtioBlock::admit(Queue& q, uint64_t cost) {
  const auto fits = [&q, cost] {
    return q.held.load() < kMaxInFlight && q.held_bytes.load() + cost <= kMaxInFlightBytes;
  };
  if (!fits()) {
    q.waiting_for_slot = true;
    if (!fits()) {  // still full after the flag is up: the next release() sees it
      ++counters_.inflight_waits;
      return false;
    }
    q.waiting_for_slot = false;
  }
  ++q.held;
  q.held_bytes += cost;
  return true;
}

void VirtioBlock::count(const BlockRequest& r, int error) {
  if (error) {
    ++counters_.io_errors;
    if (const uint64_t n = io_error_log_.next())
      KVMMIO_LOG_WARN("virtio-blk %s: %s at sector %llu (%llu bytes) failed: %s; answered IOERR (#%llu)",
                      disk_.path().c_str(), request_name(r.type), static_cast<unsigned long long>(r.sector),
                      static_cast<unsigned long long>(r.data_bytes), std::strerror(error),
                      static_cast<unsigned long long>(n));
    return;
  }
  switch (r.type) {
    case spec::kTIn:
      ++counters_.reads;
      counters_.bytes_read += r.data_bytes;
      break;
    case spec::kTOut:
      ++counters_.writes;
      counters_.bytes_written += r.data_bytes;
      break;
    case spec::kTFlush: ++counters_.flushes; break;
    case spec::kTGetId: ++counters_.get_ids; break;
    case spec::kTDiscard: ++counters_.discards; break;
    case spec::kTWriteZeroes: ++counters_.write_zeroes; break;
    default: break;
  }
}

// An engine's thread, after a request's I/O (or its drop after a reset):
// its budget goes back, and a current request's chain goes back to the
// queue it came from.
void VirtioBlock::complete_request(const IoJob& job, uint32_t written, bool more) {
  Queue& q = *queues_[job.queue];
  const bool waited_for = q.release(job.cost);
  if (!waited_for && !current(job)) return;  // a reset's leftover: no lock needed
  ++completing_;
  struct Leave {
    std::atomic<unsigned>& n;
    ~Leave() {
      --n;
      n.notify_all();
    }
  } leave{completing_};
  if (abandon_) return;  // reset or going: the lock may be gone
  auto guard = lock_->lock_unless(abandon_);
  if (!guard.owns_lock()) return;
  if (current(job)) {
    q.drain.complete(job.chain.head, written);
    if (!more) q.drain.interrupt_if_due();
  }
  if (q.waiting_for_slot.exchange(false)) process(q);
}

}  // namespace kvmmio::block
