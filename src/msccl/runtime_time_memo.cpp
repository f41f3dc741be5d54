// SPDX-License-Identifier: MIT
// The times of MSCCL programs as the runtime runs them, remembered for the process. Converting a
// program into the runtime's calls (msccl_to_schedule) is most of what writing a file costs, and
// the same program is timed again and again: a layout search makes it from different choices,
// synthesis scores its finalists by their files and the winner's file is then written once more
// (torus-8x8 all-reduce of 64 MiB with -o x.xml: 28 conversions of 7 distinct programs, 0.13 to
// 0.45 s each). The time is a function of what the runtime reads of the program (every attribute
// but names and line numbers), the size, the NPUs its ranks run on and the topology; the key is a
// 128-bit digest of those (two independent 64-bit hashes), so remembering changes no result,
// whatever the threads. Programs that fail (a deadlock) are not remembered: the error names lines.

#include <mutex>
#include <unordered_map>

#include "writer.hpp"

namespace tenet::msccl_detail {
namespace {

/// Entries kept at most; past it everything is forgotten (a sweep writes thousands of files).
constexpr std::size_t kMaxRemembered = 4096;

/// Two 64-bit hashes of one stream of values: FNV-1a and a multiply-xorshift chain.
struct Digest {
  std::uint64_t fnv = 0xcbf29ce484222325ull;
  std::uint64_t mixed = 0x9e3779b97f4a7c15ull;

  void add(std::uint64_t value) {
    for (int byte = 0; byte < 8; ++byte) {
      fnv ^= (value >> (8 * byte)) & 0xff;
      fnv *= 0x100000001b3ull;
    }
    mixed ^= value + 0x9e3779b97f4a7c15ull + (mixed << 6) + (mixed >> 2);
    mixed *= 0xbf58476d1ce4e5b9ull;
    mixed ^= mixed >> 31;
  }
  void add_signed(std::int64_t value) { add(static_cast<std::uint64_t>(value)); }
  void add(const std::string& text) {
    add(text.size());
    for (char c : text) add(static_cast<unsigned char>(c));
  }
  bool operator==(const Digest&) const = default;
};

struct DigestHash {
  std::size_t operator()(const Digest& digest) const { return static_cast<std::size_t>(digest.fnv ^ digest.mixed); }
};

Digest digest_of(const MscclProgram& program, std::uint64_t size_bytes, std::span<const NodeId> members,
                 const Topology& topology) {
  Digest digest;
  digest.add(topology.fingerprint());
  digest.add(size_bytes);
  digest.add(members.size());
  for (NodeId npu : members) digest.add(npu);
  digest.add(program.coll);
  digest.add(static_cast<std::uint64_t>(program.protocol));
  digest.add_signed(program.ngpus);
  digest.add_signed(program.nchunksperloop);
  digest.add_signed(program.nchannels);
  digest.add(program.in_place ? 1 : 0);
  digest.add(program.gpus.size());
  for (const MscclGpu& gpu : program.gpus) {
    for (int value : {gpu.id, gpu.i_chunks, gpu.o_chunks, gpu.s_chunks}) digest.add_signed(value);
    digest.add(gpu.threadblocks.size());
    for (const MscclThreadblock& tb : gpu.threadblocks) {
      for (int value : {tb.id, tb.send, tb.recv, tb.chan}) digest.add_signed(value);
      digest.add(tb.steps.size());
      for (const MscclStep& step : tb.steps) {
        for (int value : {step.s, static_cast<int>(step.type), static_cast<int>(step.srcbuf), step.srcoff,
                          static_cast<int>(step.dstbuf), step.dstoff, step.cnt, step.depid, step.deps, step.hasdep})
          digest.add_signed(value);
      }
    }
  }
  return digest;
}

struct Memo {
  std::mutex mutex;
  std::unordered_map<Digest, double, DigestHash> times;
};

Memo& memo() {
  static Memo instance;
  return instance;
}

}  // namespace

double remembered_runtime_time_us(const MscclProgram& program, std::uint64_t size_bytes,
                                  std::span<const NodeId> members, const Topology& topology,
                                  const std::function<double()>& compute) {
  const Digest key = digest_of(program, size_bytes, members, topology);
  Memo& remembered = memo();
  {
    const std::lock_guard lock(remembered.mutex);
    if (const auto found = remembered.times.find(key); found != remembered.times.end()) return found->second;
  }
  // Outside the lock: two threads may both compute a time, and both get the same one.
  const double time_us = compute();
  const std::lock_guard lock(remembered.mutex);
  if (remembered.times.size() >= kMaxRemembered) remembered.times.clear();
  remembered.times.emplace(key, time_us);
  return time_us;
}

}  // namespace tenet::msccl_detail
