// SPDX-License-Identifier: MIT
// Plan -> JSON text, laid out like the SPEC's worked example (keys in the DSL's order, one op per
// line) so that a plan diffs well and the example is reproduced byte for byte.

#include <string>

#include "plan_model.hpp"

namespace tenet::mscclpp_detail {
namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char* const hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[(c >> 4) & 0xf];
      out += hex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string int_list(const std::vector<int>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

std::string buffer_list(const std::vector<BufferRef>& entries) {
  std::string out = "[";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const BufferRef& entry = entries[i];
    if (i) out += ", ";
    out += entry.remote ? "{\"buffer_id\": " + std::to_string(entry.buffer_id)
                        : std::string("{\"type\": \"") + buffer_type_text(entry.type) + "\"";
    out += ", \"index\": " + std::to_string(entry.index) + ", \"size\": " + std::to_string(entry.size) + "}";
  }
  return out + "]";
}

std::string op_text(const PlanOp& op) {
  std::string out = std::string("{\"name\": \"") + op_name_text(op.name) + "\"";
  if (!op.src.empty()) out += ", \"src_buff\": " + buffer_list(op.src);
  if (!op.dst.empty()) out += ", \"dst_buff\": " + buffer_list(op.dst);
  if (!op.channel_ids.empty()) out += ", \"channel_ids\": " + int_list(op.channel_ids);
  if (op.has_channel_type) out += std::string(", \"channel_type\": \"") + channel_type_text(op.channel_type) + "\"";
  if (!op.semaphore_ids.empty()) out += ", \"semaphore_ids\": " + int_list(op.semaphore_ids);
  if (op.name == OpName::kBarrier) {
    out += ", \"barrier_id\": " + std::to_string(op.barrier_id) +
           ", \"num_threadblocks\": " + std::to_string(op.num_threadblocks);
  }
  return out + "}";
}

/// [{"KEY": "memory", "LIST": [...]}, {"KEY": "port", ...}], types without entries left out.
std::string typed_lists(const char* key, const char* list, const std::vector<int>& memory,
                        const std::vector<int>& port) {
  std::string out = "[";
  if (!memory.empty()) out += std::string("{\"") + key + "\": \"memory\", \"" + list + "\": " + int_list(memory) + "}";
  if (!port.empty()) {
    if (!memory.empty()) out += ", ";
    out += std::string("{\"") + key + "\": \"port\", \"" + list + "\": " + int_list(port) + "}";
  }
  return out + "]";
}

std::string remote_buffers_text(const std::vector<RemoteBuffer>& buffers) {
  std::string out = "[";
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const RemoteBuffer& buffer = buffers[i];
    if (i) out += ", ";
    out += "{\"rank\": " + std::to_string(buffer.rank) + ", \"type\": \"" + buffer_type_text(buffer.type) +
           "\", \"access_channel_types\": [";
    if (buffer.memory) out += "\"memory\"";
    if (buffer.port) out += buffer.memory ? ", \"port\"" : "\"port\"";
    out += "]}";
  }
  return out + "]";
}

std::string semaphores_text(const std::vector<std::int64_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i)
    out += (i ? ", " : "") + std::string("{\"init_value\": ") + std::to_string(values[i]) + "}";
  return out + "]";
}

}  // namespace

std::string plan_to_text(const Plan& plan) {
  std::string out = "{\n";
  out += "  \"name\": " + quoted(plan.name) + ",\n";
  out += "  \"collective\": " + quoted(plan.collective) + ",\n";
  out += "  \"protocol\": " + quoted(plan.protocol) + ",\n";
  out += std::string("  \"inplace\": ") + (plan.in_place ? "true" : "false") + ",\n";
  out += std::string("  \"reuse_resources\": ") + (plan.reuse_resources ? "true" : "false") + ",\n";
  out += "  \"gpus\": [";
  for (std::size_t r = 0; r < plan.gpus.size(); ++r) {
    const PlanGpu& gpu = plan.gpus[r];
    out += r ? ",\n    {\n" : "\n    {\n";
    out += "      \"id\": " + std::to_string(r) + ",\n";
    out += "      \"input_chunks\": " + std::to_string(gpu.input_chunks) + ",\n";
    out += "      \"output_chunks\": " + std::to_string(gpu.output_chunks) + ",\n";
    out += "      \"scratch_chunks\": " + std::to_string(gpu.scratch_chunks) + ",\n";
    out += "      \"threadblocks\": [";
    for (std::size_t b = 0; b < gpu.threadblocks.size(); ++b) {
      const PlanThreadblock& block = gpu.threadblocks[b];
      out += b ? ",\n        {\n" : "\n        {\n";
      out += "          \"id\": " + std::to_string(b) + ",\n";
      out += "          \"ops\": [";
      for (std::size_t o = 0; o < block.ops.size(); ++o)
        out += (o ? ",\n            " : "\n            ") + op_text(block.ops[o]);
      out += block.ops.empty() ? "],\n" : "\n          ],\n";
      out += "          \"channels\": " +
             typed_lists("channel_type", "channel_ids", block.memory_channels, block.port_channels) + ",\n";
      out += "          \"remote_buffer_refs\": " +
             typed_lists("access_channel_type", "remote_buffer_ids", block.memory_buffers, block.port_buffers) + "\n";
      out += "        }";
    }
    out += gpu.threadblocks.empty() ? "],\n" : "\n      ],\n";
    out +=
        "      \"channels\": " + typed_lists("channel_type", "connected_to", gpu.memory_peers, gpu.port_peers) + ",\n";
    out += "      \"remote_buffers\": " + remote_buffers_text(gpu.remote_buffers) + ",\n";
    out += "      \"semaphores\": " + semaphores_text(gpu.semaphores) + "\n";
    out += "    }";
  }
  out += plan.gpus.empty() ? "],\n" : "\n  ],\n";
  out += "  \"num_threads_per_block\": " + std::to_string(plan.threads_per_block) + ",\n";
  out += std::string("  \"use_double_scratch_buffer\": ") + (plan.double_scratch ? "true" : "false") + ",\n";
  out += "  \"buffer_alignment\": " + std::to_string(plan.buffer_alignment) + ",\n";
  out += "  \"min_message_size\": " + std::to_string(plan.min_message_size) + ",\n";
  out += "  \"max_message_size\": " + std::to_string(plan.max_message_size) + "\n";
  out += "}\n";
  return out;
}

}  // namespace tenet::mscclpp_detail
