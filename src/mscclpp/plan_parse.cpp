// SPDX-License-Identifier: MIT
// Plan JSON -> Plan: every field typed and named by JSON pointer. What the values refer to is
// checked later (plan_rules.cpp), so one bad reference does not hide the file's other mistakes.

#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "../topology/json_fields.hpp"
#include "plan_model.hpp"
#include "tenet/common/error.hpp"
#include "tenet/topology/topology_json.hpp"

namespace tenet::mscclpp_detail {
namespace {

using nlohmann::json;
using namespace tenet::json_fields;

// Sizes refused before anything is allocated for them.
constexpr std::int64_t kMaxRanks = 4096;
constexpr std::int64_t kMaxChunks = 1 << 20;
constexpr std::int64_t kMaxIndex = std::numeric_limits<int>::max() / 2;

const char* const kOpNames[] = {"nop",   "barrier", "signal",    "rlxsignal",   "wait",        "rlxwait",
                                "flush", "put",     "pws",       "pwsf",        "get",         "copy",
                                "re",    "res",     "rre",       "rres",        "cpkt",        "upkt",
                                "ppkt",  "rppkt",   "repkt",     "respkt",      "recpkt",      "recspkt",
                                "glres", "gstore",  "gstorepkt", "sem_acquire", "sem_release", "pipeline"};

class Reader {
 public:
  explicit Reader(ProblemList& problems) : problems_(problems) {}

  Plan read(const json& root) {
    Plan plan;
    if (!root.is_object()) {
      problems_.add("", "a plan must be a JSON object (got " + describe_type(root) + ")");
      return plan;
    }
    if (auto v = string_at(root, "", "name", true)) plan.name = *v;
    if (auto v = string_at(root, "", "collective", true)) plan.collective = *v;
    if (auto v = string_at(root, "", "protocol", true)) plan.protocol = *v;
    if (auto v = bool_at(root, "", "inplace", true)) plan.in_place = *v;
    if (auto v = bool_at(root, "", "reuse_resources", false)) plan.reuse_resources = *v;
    if (auto v = bool_at(root, "", "use_double_scratch_buffer", false)) plan.double_scratch = *v;
    if (auto v = unsigned_at(root, "", "buffer_alignment")) plan.buffer_alignment = *v;
    if (auto v = unsigned_at(root, "", "min_message_size")) plan.min_message_size = *v;
    if (auto v = unsigned_at(root, "", "max_message_size")) plan.max_message_size = *v;
    if (auto v = int_at(root, "", "num_threads_per_block", 1, kMaxThreadsPerBlock, false))
      plan.threads_per_block = static_cast<int>(*v);
    if (plan.buffer_alignment == 0) problems_.add("/buffer_alignment", "must be at least 1 (16 or a multiple of 16)");
    const json* gpus = array_at(root, "", "gpus", true);
    if (gpus == nullptr) return plan;
    if (gpus->empty() || static_cast<std::int64_t>(gpus->size()) > kMaxRanks) {
      problems_.add("/gpus",
                    "holds " + std::to_string(gpus->size()) + " ranks; expected 1 to " + std::to_string(kMaxRanks));
      return plan;
    }
    plan.gpus.resize(gpus->size());
    for (std::size_t r = 0; r < gpus->size(); ++r)
      read_gpu((*gpus)[r], "/gpus/" + std::to_string(r), static_cast<int>(r), plan.gpus[r]);
    return plan;
  }

 private:
  const json* member(const json& object, const std::string& pointer, const char* key, bool required) {
    auto it = object.find(key);
    if (it == object.end()) {
      if (required) problems_.add(pointer + "/" + key, "is missing");
      return nullptr;
    }
    return &*it;
  }

  std::optional<std::string> string_at(const json& object, const std::string& pointer, const char* key, bool required) {
    const json* value = member(object, pointer, key, required);
    return value ? read_string(*value, pointer + "/" + key, problems_) : std::nullopt;
  }

  std::optional<bool> bool_at(const json& object, const std::string& pointer, const char* key, bool required) {
    const json* value = member(object, pointer, key, required);
    return value ? read_bool(*value, pointer + "/" + key, problems_) : std::nullopt;
  }

  std::optional<std::int64_t> int_at(const json& object, const std::string& pointer, const char* key, std::int64_t min,
                                     std::int64_t max, bool required) {
    const json* value = member(object, pointer, key, required);
    return value ? read_integer(*value, pointer + "/" + key, min, max, problems_) : std::nullopt;
  }

  std::optional<std::uint64_t> unsigned_at(const json& object, const std::string& pointer, const char* key) {
    const json* value = member(object, pointer, key, false);
    if (value == nullptr) return std::nullopt;
    if (value->is_number_unsigned()) return value->get<std::uint64_t>();
    problems_.add(pointer + "/" + key, "must be a whole number from 0 to 2^64-1 (got " + describe_type(*value) + ")");
    return std::nullopt;
  }

  const json* array_at(const json& object, const std::string& pointer, const char* key, bool required) {
    const json* value = member(object, pointer, key, required);
    if (value == nullptr) return nullptr;
    if (!value->is_array()) {
      problems_.add(pointer + "/" + key, "must be an array (got " + describe_type(*value) + ")");
      return nullptr;
    }
    return value;
  }

  bool is_object(const json& value, const std::string& pointer) {
    if (value.is_object()) return true;
    problems_.add(pointer, "must be an object (got " + describe_type(value) + ")");
    return false;
  }

  std::vector<int> int_list(const json& array, const std::string& pointer, std::int64_t max) {
    std::vector<int> values;
    for (std::size_t i = 0; i < array.size(); ++i) {
      if (auto v = read_integer(array[i], pointer + "/" + std::to_string(i), 0, max, problems_))
        values.push_back(static_cast<int>(*v));
    }
    return values;
  }

  std::optional<BufferType> buffer_type(const json& value, const std::string& pointer) {
    const std::optional<std::string> text = read_string(value, pointer, problems_);
    if (!text) return std::nullopt;
    if (*text == "i") return BufferType::kInput;
    if (*text == "o") return BufferType::kOutput;
    if (*text == "s") return BufferType::kScratch;
    problems_.add(pointer, "unknown buffer type '" + *text + "'; expected \"i\", \"o\" or \"s\"");
    return std::nullopt;
  }

  std::optional<ChannelType> channel_type(const json& value, const std::string& pointer) {
    const std::optional<std::string> text = read_string(value, pointer, problems_);
    if (!text) return std::nullopt;
    if (*text == "memory") return ChannelType::kMemory;
    if (*text == "port") return ChannelType::kPort;
    if (*text == "switch") return ChannelType::kSwitch;
    if (*text == "none") return ChannelType::kNone;
    problems_.add(pointer,
                  "unknown channel type '" + *text + "'; expected \"memory\", \"port\", \"switch\" or \"none\"");
    return std::nullopt;
  }

  void read_gpu(const json& value, const std::string& pointer, int rank, PlanGpu& gpu) {
    if (!is_object(value, pointer)) return;
    if (auto id = int_at(value, pointer, "id", 0, kMaxRanks, true); id && *id != rank) {
      problems_.add(pointer + "/id", "is " + std::to_string(*id) + "; the executor requires gpus[r].id == r (" +
                                         std::to_string(rank) + ")");
    }
    if (auto v = int_at(value, pointer, "input_chunks", 1, kMaxChunks, true)) gpu.input_chunks = static_cast<int>(*v);
    if (auto v = int_at(value, pointer, "output_chunks", 1, kMaxChunks, true)) gpu.output_chunks = static_cast<int>(*v);
    if (auto v = int_at(value, pointer, "scratch_chunks", 0, kMaxChunks, true))
      gpu.scratch_chunks = static_cast<int>(*v);
    if (const json* channels = array_at(value, pointer, "channels", true)) {
      for (std::size_t c = 0; c < channels->size(); ++c) {
        const std::string at = pointer + "/channels/" + std::to_string(c);
        const json& entry = (*channels)[c];
        if (!is_object(entry, at)) continue;
        const json* type_value = member(entry, at, "channel_type", true);
        const std::optional<ChannelType> type =
            type_value ? channel_type(*type_value, at + "/channel_type") : std::nullopt;
        if (!type) continue;
        if (*type == ChannelType::kSwitch) {
          gpu.has_switch_channels = true;
          continue;
        }
        if (*type == ChannelType::kNone) {
          problems_.add(at + "/channel_type", "a rank's channel must be \"memory\", \"port\" or \"switch\"");
          continue;
        }
        if (const json* peers = array_at(entry, at, "connected_to", true)) {
          const std::vector<int> list = int_list(*peers, at + "/connected_to", kMaxRanks);
          auto& target = *type == ChannelType::kMemory ? gpu.memory_peers : gpu.port_peers;
          target.insert(target.end(), list.begin(), list.end());
        }
      }
    }
    if (const json* buffers = array_at(value, pointer, "remote_buffers", true)) {
      for (std::size_t b = 0; b < buffers->size(); ++b) {
        const std::string at = pointer + "/remote_buffers/" + std::to_string(b);
        const json& entry = (*buffers)[b];
        RemoteBuffer buffer;
        if (!is_object(entry, at)) continue;
        if (auto v = int_at(entry, at, "rank", 0, kMaxRanks, true)) buffer.rank = static_cast<int>(*v);
        if (const json* type = member(entry, at, "type", true)) {
          if (auto t = buffer_type(*type, at + "/type")) buffer.type = *t;
        }
        if (const json* access = array_at(entry, at, "access_channel_types", true)) {
          for (std::size_t a = 0; a < access->size(); ++a) {
            const auto t = channel_type((*access)[a], at + "/access_channel_types/" + std::to_string(a));
            if (t == ChannelType::kMemory) buffer.memory = true;
            if (t == ChannelType::kPort) buffer.port = true;
          }
        }
        gpu.remote_buffers.push_back(buffer);
      }
    }
    if (const json* semaphores = array_at(value, pointer, "semaphores", false)) {
      for (std::size_t s = 0; s < semaphores->size(); ++s) {
        const std::string at = pointer + "/semaphores/" + std::to_string(s);
        if (!is_object((*semaphores)[s], at)) continue;
        gpu.semaphores.push_back(int_at((*semaphores)[s], at, "init_value", 0, kMaxIndex, true).value_or(0));
      }
    }
    if (const json* blocks = array_at(value, pointer, "threadblocks", true)) {
      gpu.threadblocks.resize(blocks->size());
      for (std::size_t b = 0; b < blocks->size(); ++b) {
        read_threadblock((*blocks)[b], pointer + "/threadblocks/" + std::to_string(b), static_cast<int>(b),
                         gpu.threadblocks[b]);
      }
    }
  }

  void read_threadblock(const json& value, const std::string& pointer, int position, PlanThreadblock& block) {
    if (!is_object(value, pointer)) return;
    if (auto id = int_at(value, pointer, "id", 0, kMaxIndex, true); id && *id != position) {
      problems_.add(pointer + "/id", "is " + std::to_string(*id) + "; must equal the threadblock's position " +
                                         std::to_string(position) +
                                         " (the executor fills channel tables by id but runs ops by position)");
    }
    if (const json* channels = array_at(value, pointer, "channels", true)) {
      for (std::size_t c = 0; c < channels->size(); ++c) {
        const std::string at = pointer + "/channels/" + std::to_string(c);
        if (!is_object((*channels)[c], at)) continue;
        const json* type_value = member((*channels)[c], at, "channel_type", true);
        const ChannelType type = type_value
                                     ? channel_type(*type_value, at + "/channel_type").value_or(ChannelType::kNone)
                                     : ChannelType::kNone;
        const json* ids = array_at((*channels)[c], at, "channel_ids", true);
        if (ids == nullptr) continue;
        const std::vector<int> list = int_list(*ids, at + "/channel_ids", kMaxIndex);
        if (type == ChannelType::kMemory)
          block.memory_channels.insert(block.memory_channels.end(), list.begin(), list.end());
        if (type == ChannelType::kPort) block.port_channels.insert(block.port_channels.end(), list.begin(), list.end());
      }
    }
    if (const json* refs = array_at(value, pointer, "remote_buffer_refs", false)) {
      for (std::size_t c = 0; c < refs->size(); ++c) {
        const std::string at = pointer + "/remote_buffer_refs/" + std::to_string(c);
        if (!is_object((*refs)[c], at)) continue;
        const json* type_value = member((*refs)[c], at, "access_channel_type", true);
        const ChannelType type =
            type_value ? channel_type(*type_value, at + "/access_channel_type").value_or(ChannelType::kNone)
                       : ChannelType::kNone;
        const json* ids = array_at((*refs)[c], at, "remote_buffer_ids", true);
        if (ids == nullptr) continue;
        const std::vector<int> list = int_list(*ids, at + "/remote_buffer_ids", kMaxIndex);
        if (type == ChannelType::kMemory)
          block.memory_buffers.insert(block.memory_buffers.end(), list.begin(), list.end());
        if (type == ChannelType::kPort) block.port_buffers.insert(block.port_buffers.end(), list.begin(), list.end());
      }
    }
    const json* ops = array_at(value, pointer, "ops", true);
    if (ops == nullptr) return;
    if (ops->size() > 4 * kMaxOpsPerThreadblock) {
      // Far beyond the executor's limit: the rules report it; reading them all would only cost memory.
      block.ops.resize(ops->size());
      return;
    }
    block.ops.resize(ops->size());
    for (std::size_t o = 0; o < ops->size(); ++o)
      read_op((*ops)[o], pointer + "/ops/" + std::to_string(o), block.ops[o]);
  }

  void read_buffers(const json& object, const std::string& pointer, const char* key, std::vector<BufferRef>& entries) {
    const json* list = array_at(object, pointer, key, false);
    if (list == nullptr) return;
    for (std::size_t e = 0; e < list->size() && e <= static_cast<std::size_t>(kMaxBuffersPerOp); ++e) {
      const std::string at = pointer + "/" + key + "/" + std::to_string(e);
      const json& value = (*list)[e];
      if (!is_object(value, at)) continue;
      BufferRef entry;
      if (value.contains("buffer_id")) {
        entry.remote = true;
        entry.buffer_id = static_cast<int>(int_at(value, at, "buffer_id", 0, kMaxIndex, true).value_or(0));
      } else if (value.contains("switch_channel_id")) {
        entry.remote = true;
        entry.buffer_id = -1;
      } else if (const json* type = member(value, at, "type", true)) {
        entry.type = buffer_type(*type, at + "/type").value_or(BufferType::kInput);
      }
      entry.index = static_cast<int>(int_at(value, at, "index", 0, kMaxIndex, true).value_or(0));
      entry.size = static_cast<int>(int_at(value, at, "size", 0, kMaxIndex, true).value_or(0));
      entries.push_back(entry);
    }
    if (list->size() > static_cast<std::size_t>(kMaxBuffersPerOp)) entries.resize(kMaxBuffersPerOp + 1);
  }

  void read_op(const json& value, const std::string& pointer, PlanOp& op) {
    if (!is_object(value, pointer)) return;
    if (auto name = string_at(value, pointer, "name", true)) {
      if (auto parsed = op_name_from(*name)) {
        op.name = *parsed;
      } else {
        std::vector<std::string> known(std::begin(kOpNames), std::end(kOpNames));
        std::string message = "unknown operation '" + *name + "'";
        const std::string suggestion = closest_match(*name, known);
        if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
        problems_.add(pointer + "/name", message);
      }
    }
    if (const json* type = member(value, pointer, "channel_type", false)) {
      if (auto t = channel_type(*type, pointer + "/channel_type")) {
        op.channel_type = *t;
        op.has_channel_type = true;
      }
    }
    if (const json* ids = array_at(value, pointer, "channel_ids", false)) {
      op.channel_ids = int_list(*ids, pointer + "/channel_ids", kMaxIndex);
    }
    if (const json* ids = array_at(value, pointer, "semaphore_ids", false)) {
      op.semaphore_ids = int_list(*ids, pointer + "/semaphore_ids", kMaxIndex);
    }
    read_buffers(value, pointer, "src_buff", op.src);
    read_buffers(value, pointer, "dst_buff", op.dst);
    if (op.name == OpName::kBarrier) {
      op.barrier_id = static_cast<int>(int_at(value, pointer, "barrier_id", 0, kMaxIndex, true).value_or(0));
      op.num_threadblocks =
          static_cast<int>(int_at(value, pointer, "num_threadblocks", 1, kMaxIndex, true).value_or(1));
    }
  }

  ProblemList& problems_;
};

}  // namespace

const char* op_name_text(OpName name) { return kOpNames[static_cast<int>(name)]; }

std::optional<OpName> op_name_from(const std::string& text) {
  for (std::size_t i = 0; i < std::size(kOpNames); ++i) {
    if (text == kOpNames[i]) return static_cast<OpName>(i);
  }
  return std::nullopt;
}

const char* buffer_type_text(BufferType type) {
  switch (type) {
    case BufferType::kInput: return "i";
    case BufferType::kOutput: return "o";
    case BufferType::kScratch: return "s";
  }
  return "?";
}

const char* channel_type_text(ChannelType type) {
  switch (type) {
    case ChannelType::kNone: return "none";
    case ChannelType::kMemory: return "memory";
    case ChannelType::kPort: return "port";
    case ChannelType::kSwitch: return "switch";
  }
  return "?";
}

Plan parse_plan(const std::string& text, const std::string& source) {
  const json root = parse_json_text(text, source);
  ProblemList problems(source);
  Plan plan = Reader(problems).read(root);
  problems.throw_if_any();
  return plan;
}

}  // namespace tenet::mscclpp_detail
