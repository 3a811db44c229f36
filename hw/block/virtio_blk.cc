// SPDX-License-Identifier: BSD-2-Clause
// VirtioBlock: features, configuration, the queue and its completions (see
// the header).
#include "kvmmio/block/virtio_blk.h"

#include <algorithm>
#include <cstring>
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

VirtioBlock::VirtioBlock(const GuestMemory& memory, EventLoop& loop, DiskImage disk, BlockDeviceOptions options)
    : memory_(memory),
      loop_(loop),
      disk_(std::move(disk)),
      options_(std::move(options)),
      drain_([this] {
        ++counters_.budget_yields;
        if (resume_) resume_->schedule();
      }) {
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
  settings_.max_in_flight = kMaxInFlight;
  if (disk_.direct()) bounce_ = std::make_unique<BounceBuffer>();
  make_engine();
  settings_.io_uring = std::string_view(worker_->name()) == "io_uring";
}

void VirtioBlock::make_engine() {
  auto complete = [this](const IoJob& job, const IoOutcome& out, bool more) {
    complete_request(job.generation, job.chain.head, out.written, more);
  };
  if (options_.engine != EngineChoice::kThreads) {
    UringWorker::Hooks hooks{
        .on_start = [this] { on_io_thread_start(options_.on_uring_thread_start); },
        .refused = [this] { return confine_failed_.load(); },
        .execute = [this](const IoJob& job) { return execute(job); },
        .count = [this](const BlockRequest& r, int error) { count(r, error); },
        .complete = complete,
    };
    std::string why;
    worker_ = UringWorker::create(options_.thread_name, memory_, disk_, std::move(hooks), why);
    if (worker_) return;
    if (options_.engine == EngineChoice::kIoUring)
      throw UserError("--disk " + disk_.path() + ",engine=io_uring: the io_uring ring cannot be set up (" + why +
                      "); use engine=threads, or allow io_uring (kernel.io_uring_disabled=0, a seccomp profile "
                      "that permits io_uring_setup)");
    KVMMIO_LOG_WARN("virtio-blk %s: io_uring unavailable (%s); using the threads engine", disk_.path().c_str(),
                    why.c_str());
  }
  worker_ = std::make_unique<IoWorker>(
      options_.thread_name, [this] { on_io_thread_start(options_.on_io_thread_start); },
      [this](const IoJob& job) { return execute(job); }, complete);
}

IoOutcome VirtioBlock::execute(const IoJob& job) {
  if (confine_failed_) {
    write_status(memory_, job.chain, job.request.status_offset, spec::kSIoErr);
    return IoOutcome{spec::kSIoErr, 1, EPERM};
  }
  IoOutcome out = execute_request(memory_, disk_, options_.serial, job.chain, job.request, bounce_.get());
  count(job.request, out.error);
  return out;
}

const char* VirtioBlock::engine_name() const { return worker_->name(); }

VirtioBlock::~VirtioBlock() {
  abandon_ = true;
  worker_.reset();  // joins the worker: nothing runs for the device after this
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
  c.num_queues = 1;
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
  virtio::SplitQueue* ring = nullptr;
  for (const auto& q : activation.queues)
    if (q.index == 0) ring = q.ring;
  try {
    resume_ = std::make_unique<DeferredWork>(loop_, *activation.lock, [this] { process(); });
  } catch (const std::exception& e) {
    KVMMIO_LOG_ERROR("virtio-blk: cannot start: %s", e.what());
    return false;
  }
  lock_ = activation.lock;
  interrupt_ = activation.interrupt;
  drain_.bind(ring, interrupt_);
  in_flight_ = 0;
  in_flight_shown_ = 0;
  waiting_for_slot_ = false;
  abandon_ = false;
  ++counters_.activations;
  return true;
}

void VirtioBlock::reset() {
  ++generation_;               // completions of the old activation are dropped
  abandon_ = true;             // a completion waiting for our lock gives up
  worker_->cancel_and_wait();  // after this the worker touches nothing of ours
  resume_.reset();
  drain_.unbind();
  interrupt_ = nullptr;
  in_flight_ = 0;
  in_flight_shown_ = 0;
  waiting_for_slot_ = false;
}

void VirtioBlock::queue_notify(uint32_t queue) {
  if (queue == 0) process();
}

void VirtioBlock::process() {
  if (waiting_for_slot_) return;  // the next completion resumes the drain
  drain_.run({.chains = kChainsPerDispatch}, [this](const virtio::DescriptorChain& chain, uint64_t) {
    return take(chain);
  });
}

// One chain: answered now if the checks refuse it, else handed to the worker.
virtio::ChainStep VirtioBlock::take(const virtio::DescriptorChain& chain) {
  if (in_flight_ >= kMaxInFlight) {
    ++counters_.inflight_waits;
    waiting_for_slot_ = true;
    return virtio::ChainStep::paused();
  }
  const ParsedRequest parsed = parse_request(memory_, chain, limits_);
  if (!parsed.request) {
    ++counters_.refused;
    errors_.report("%s (request type %u)", parsed.error, parsed.type);
    if (!parsed.status_offset) return virtio::ChainStep::used(0);
    write_status(memory_, chain, *parsed.status_offset, parsed.status);
    return virtio::ChainStep::used(1);
  }
  in_flight_shown_ = ++in_flight_;
  worker_->submit(IoJob{generation_, chain, *parsed.request});
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

// The worker thread, after a request's I/O and status byte.
void VirtioBlock::complete_request(uint64_t generation, uint16_t head, uint32_t written, bool more) {
  auto guard = lock_->lock_unless(abandon_);
  if (!guard.owns_lock() || generation != generation_) return;  // a reset or the destructor dropped it
  drain_.complete(head, written);
  in_flight_shown_ = --in_flight_;
  if (!more) drain_.interrupt_if_due();
  if (waiting_for_slot_) {
    waiting_for_slot_ = false;
    process();
  }
}

}  // namespace kvmmio::block
