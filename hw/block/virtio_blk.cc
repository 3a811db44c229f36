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
#include "io_worker.h"
#include "kvmmio/base/error.h"
#include "uring_worker.h"
#include "kvmmio/virtio/virtio_spec.h"

namespace kvmmio::block {
namespace {

constexpr uint64_t bit(unsigned n) { return uint64_t{1} << n; }

}  // namespace

// One request queue: its drain, its bound, its engine. The drain, the
// counts and `resume` are under the device lock; the engine and the bounce
// buffer are its thread's.
struct VirtioBlock::Queue {
  Queue(VirtioBlock& device, uint16_t queue_index)
      : index(queue_index), drain([&device, this] {
          ++device.counters_.budget_yields;
          if (resume) resume->schedule();
        }) {}
  // No request of the activation in flight or waited for (activate, reset).
  void clear() {
    in_flight = 0;
    in_flight_shown = 0;
    waiting_for_slot = false;
  }

  const uint16_t index;
  virtio::QueueDrain drain;
  std::unique_ptr<DeferredWork> resume;  // the drain past its budget
  unsigned in_flight = 0;
  std::atomic<unsigned> in_flight_shown{0};  // in_flight, for requests_in_flight()
  bool waiting_for_slot = false;             // paused at kMaxInFlight
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
      .execute = [this](const IoJob& job) { return execute(job); },
      .count = [this](const BlockRequest& r, int error) { count(r, error); },
      .complete = [this](const IoJob& job, const IoOutcome& out, bool more) {
        complete_request(job, out.written, more);
      },
  };
  return UringWorker::create(engine_thread_name(q), memory_, disk_, std::move(hooks), why);
}

std::unique_ptr<IoEngine> VirtioBlock::make_threads_engine(Queue& q) {
  return std::make_unique<IoWorker>(
      engine_thread_name(q), [this] { on_io_thread_start(options_.on_io_thread_start); },
      [this](const IoJob& job) { return execute(job); },
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
      throw UserError("--disk " + disk_.path() + ",engine=io_uring: the io_uring ring cannot be set up (" + why +
                      "); use engine=threads, or allow io_uring (kernel.io_uring_disabled=0, a seccomp profile "
                      "that permits io_uring_setup)");
    KVMMIO_LOG_WARN("virtio-blk %s: io_uring unavailable (%s); using the threads engine", disk_.path().c_str(),
                    why.c_str());
  }
  for (auto& q : queues_) q->engine = make_threads_engine(*q);
}

IoOutcome VirtioBlock::execute(const IoJob& job) {
  if (confine_failed_) {
    write_status(memory_, job.chain, job.request.status_offset, spec::kSIoErr);
    return IoOutcome{spec::kSIoErr, 1, EPERM};
  }
  IoOutcome out = execute_request(memory_, disk_, options_.serial, job.chain, job.request,
                                  queues_[job.queue]->bounce.get());
  count(job.request, out.error);
  return out;
}

const char* VirtioBlock::engine_name() const { return queues_.front()->engine->name(); }

unsigned VirtioBlock::requests_in_flight() const {
  unsigned n = 0;
  for (const auto& q : queues_) n += q->in_flight_shown.load(std::memory_order_acquire);
  return n;
}

unsigned VirtioBlock::requests_in_flight(uint32_t queue) const {
  return queue < queues_.size() ? queues_[queue]->in_flight_shown.load(std::memory_order_acquire) : 0;
}

VirtioBlock::~VirtioBlock() {
  abandon_ = true;
  // Joins every engine's thread: nothing runs for the device after this.
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
  uint64_t f = bit(spec::kFSegMax) | bit(spec::kFBlkSize) | bit(spec::kFFlush);
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
    q->clear();
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
  ++generation_;  // completions of the old activation are dropped
  abandon_ = true;  // a completion waiting for our lock gives up
  // After each returns, that engine touches nothing of ours; completions
  // on the others give up on the lock meanwhile.
  for (auto& q : queues_) q->engine->cancel_and_wait();
  for (auto& q : queues_) {
    q->resume.reset();
    q->drain.unbind();
    q->clear();
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
  if (q.in_flight >= kMaxInFlight) {
    ++counters_.inflight_waits;
    q.waiting_for_slot = true;
    return virtio::ChainStep::paused();
  }
  const ParsedRequest parsed = parse_request(memory_, chain, limits_);
  if (!parsed.request) {
    ++counters_.refused;
    errors_.report("%s (request type %u, queue %u)", parsed.error, parsed.type, unsigned{q.index});
    if (!parsed.status_offset) return virtio::ChainStep::used(0);
    write_status(memory_, chain, *parsed.status_offset, parsed.status);
    return virtio::ChainStep::used(1);
  }
  q.in_flight_shown = ++q.in_flight;
  q.engine->submit(IoJob{generation_, q.index, chain, *parsed.request});
  return virtio::ChainStep::kept();
}

void VirtioBlock::count(const BlockRequest& r, int error) {
  if (error) {
    ++counters_.io_errors;
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

// An engine's thread, after a request's I/O and status byte: the chain
// goes back to the queue it came from.
void VirtioBlock::complete_request(const IoJob& job, uint32_t written, bool more) {
  auto guard = lock_->lock_unless(abandon_);
  if (!guard.owns_lock() || job.generation != generation_) return;  // a reset or the destructor dropped it
  Queue& q = *queues_[job.queue];
  q.drain.complete(job.chain.head, written);
  q.in_flight_shown = --q.in_flight;
  if (!more) q.drain.interrupt_if_due();
  if (q.waiting_for_slot) {
    q.waiting_for_slot = false;
    process(q);
  }
}

}  // namespace kvmmio::block
