// SPDX-License-Identifier: MIT
// From text to MscclProgram: the lexical scan, then pugixml for the tree. Every attribute is read
// the way the runtime needs it written (plain decimal: the runtime's strtol honours 0x and 0
// prefixes and ignores trailing garbage, so "010" would load as 8). Only presence, spelling and
// number syntax are checked here; what the values mean is rules.cpp's business.

#include <algorithm>
#include <charconv>
#include <limits>
#include <sstream>

#include <pugixml.hpp>

#include "internal.hpp"
#include "tenet/common/error.hpp"

namespace tenet::msccl_detail {
namespace {

/// Where an element is, formatted only when there is a problem to report.
struct Context {
  int rank = -1;
  int tb = -1;
  int position = -1;

  std::string text() const {
    if (rank < 0) return "";
    std::string out = "rank " + std::to_string(rank);
    if (tb >= 0) out += " tb " + std::to_string(tb);
    if (position >= 0) out += " position " + std::to_string(position);
    return out;
  }
};

class TreeReader {
 public:
  explicit TreeReader(const std::string& text) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  int line_of(const pugi::xml_node& node) const {
    const std::ptrdiff_t offset = node.offset_debug();
    if (offset < 0) return 0;
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), static_cast<std::size_t>(offset));
    return static_cast<int>(it - line_starts_.begin());
  }

  /// "line 7: <step> (rank 1 tb 0 position 2)": where a problem is.
  std::string where(const pugi::xml_node& node, const Context& context) const {
    std::string text = "line " + std::to_string(line_of(node)) + ": <";
    text += node.name();
    text += ">";
    const std::string inside = context.text();
    if (!inside.empty()) {
      text += " (";
      text += inside;
      text += ")";
    }
    return text;
  }

  bool text_attribute(const pugi::xml_node& node, const char* name, const Context& context, std::string& out) {
    const pugi::xml_attribute attribute = node.attribute(name);
    if (!attribute) {
      fail(where(node, context) + " lacks attribute '" + name + "': the runtime does not load it without");
      return false;
    }
    out = attribute.value();
    return true;
  }

  template <typename Integer>
  bool integer(const pugi::xml_node& node, const char* name, const Context& context, Integer& out,
               bool required = true) {
    const pugi::xml_attribute attribute = node.attribute(name);
    if (!attribute) {
      if (required)
        fail(where(node, context) + " lacks attribute '" + name + "': the runtime does not load it without");
      return !required;
    }
    const std::string_view value = attribute.value();
    if (!plain_decimal(value)) {
      fail(where(node, context) + " " + name + "=\"" + std::string(value) +
           "\" is not a plain decimal integer (the runtime reads numbers with strtol base 0: \"010\" is 8, \"0x10\" "
           "16)");
      return false;
    }
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), out);
    if (error != std::errc() || end != value.data() + value.size()) {
      fail(where(node, context) + " " + name + "=\"" + std::string(value) + "\" is out of range");
      return false;
    }
    return true;
  }

  void fail(std::string message) {
    if (problem.empty()) problem = std::move(message);
  }

  std::string problem;

 private:
  static bool plain_decimal(std::string_view value) {
    std::size_t i = value.size() > 1 && value[0] == '-' ? 1 : 0;
    if (i == value.size()) return false;
    if (value[i] == '0' && value.size() > i + 1) return false;
    return std::all_of(value.begin() + static_cast<std::ptrdiff_t>(i), value.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
  }

  std::vector<std::size_t> line_starts_;
};

bool step_type(const std::string& text, MscclStepType& type) {
  static const std::pair<const char*, MscclStepType> kTypes[] = {{"s", MscclStepType::kSend},
                                                                 {"r", MscclStepType::kRecv},
                                                                 {"rcs", MscclStepType::kRecvCopySend},
                                                                 {"rrs", MscclStepType::kRecvReduceSend},
                                                                 {"rrc", MscclStepType::kRecvReduceCopy},
                                                                 {"rrcs", MscclStepType::kRecvReduceCopySend},
                                                                 {"cpy", MscclStepType::kCopy},
                                                                 {"re", MscclStepType::kReduce},
                                                                 {"ra", MscclStepType::kResAdd},
                                                                 {"nop", MscclStepType::kNop}};
  for (const auto& [name, value] : kTypes) {
    if (text == name) {
      type = value;
      return true;
    }
  }
  return false;
}

bool buffer(const std::string& text, MscclBuffer& out) {
  if (text == "i")
    out = MscclBuffer::kInput;
  else if (text == "o")
    out = MscclBuffer::kOutput;
  else if (text == "s")
    out = MscclBuffer::kScratch;
  else
    return false;
  return true;
}

void read_step(TreeReader& reader, const pugi::xml_node& node, const Context& context, MscclStep& step) {
  step.line = reader.line_of(node);
  if (node.first_child()) {
    reader.fail(reader.where(node, context) + " has content: a child under <step> crashes the runtime's reader");
    return;
  }
  std::string type;
  std::string srcbuf;
  std::string dstbuf;
  if (!reader.integer(node, "s", context, step.s) || !reader.text_attribute(node, "type", context, type) ||
      !reader.text_attribute(node, "srcbuf", context, srcbuf) ||
      !reader.integer(node, "srcoff", context, step.srcoff) ||
      !reader.text_attribute(node, "dstbuf", context, dstbuf) ||
      !reader.integer(node, "dstoff", context, step.dstoff) || !reader.integer(node, "cnt", context, step.cnt) ||
      !reader.integer(node, "depid", context, step.depid) || !reader.integer(node, "deps", context, step.deps) ||
      !reader.integer(node, "hasdep", context, step.hasdep)) {
    return;
  }
  if (!step_type(type, step.type)) {
    reader.fail(reader.where(node, context) + " type=\"" + type +
                "\" is not a step type the runtime knows (s, r, rcs, rrs, rrc, rrcs, cpy, re, nop)");
  } else if (!buffer(srcbuf, step.srcbuf)) {
    reader.fail(reader.where(node, context) + " srcbuf=\"" + srcbuf + "\" is not a buffer (i, o or s)");
  } else if (!buffer(dstbuf, step.dstbuf)) {
    reader.fail(reader.where(node, context) + " dstbuf=\"" + dstbuf + "\" is not a buffer (i, o or s)");
  }
}

void read_threadblock(TreeReader& reader, const pugi::xml_node& node, int rank, MscclThreadblock& tb) {
  const Context context{rank, -1, -1};
  tb.line = reader.line_of(node);
  if (!reader.integer(node, "id", context, tb.id) || !reader.integer(node, "send", context, tb.send) ||
      !reader.integer(node, "recv", context, tb.recv) || !reader.integer(node, "chan", context, tb.chan)) {
    return;
  }
  for (const pugi::xml_node& child : node.children()) {
    const Context step_context{rank, tb.id, static_cast<int>(tb.steps.size())};
    if (std::string(child.name()) != "step") {
      reader.fail(reader.where(child, step_context) + " inside <tb>: only <step> elements belong there");
      return;
    }
    tb.steps.emplace_back();
    read_step(reader, child, step_context, tb.steps.back());
    if (!reader.problem.empty()) return;
  }
}

void read_gpu(TreeReader& reader, const pugi::xml_node& node, MscclGpu& gpu) {
  gpu.line = reader.line_of(node);
  if (!reader.integer(node, "id", Context{}, gpu.id)) return;
  const Context context{gpu.id, -1, -1};
  if (!reader.integer(node, "i_chunks", context, gpu.i_chunks) ||
      !reader.integer(node, "o_chunks", context, gpu.o_chunks) ||
      !reader.integer(node, "s_chunks", context, gpu.s_chunks)) {
    return;
  }
  for (const pugi::xml_node& child : node.children()) {
    if (std::string(child.name()) != "tb") {
      reader.fail(reader.where(child, context) + " inside <gpu>: only <tb> elements belong there");
      return;
    }
    gpu.threadblocks.emplace_back();
    read_threadblock(reader, child, gpu.id, gpu.threadblocks.back());
    if (!reader.problem.empty()) return;
  }
}

void read_algo(TreeReader& reader, const pugi::xml_node& node, MscclProgram& program) {
  program.line = reader.line_of(node);
  std::string proto;
  int inplace = 0;
  if (!reader.text_attribute(node, "name", Context{}, program.name) ||
      !reader.text_attribute(node, "proto", Context{}, proto) ||
      !reader.integer(node, "nchannels", Context{}, program.nchannels) ||
      !reader.integer(node, "nchunksperloop", Context{}, program.nchunksperloop) ||
      !reader.integer(node, "ngpus", Context{}, program.ngpus) ||
      !reader.text_attribute(node, "coll", Context{}, program.coll) ||
      !reader.integer(node, "inplace", Context{}, inplace)) {
    return;
  }
  if (proto == "Simple")
    program.protocol = MscclProtocol::kSimple;
  else if (proto == "LL")
    program.protocol = MscclProtocol::kLL;
  else if (proto == "LL128")
    program.protocol = MscclProtocol::kLL128;
  else {
    reader.fail(reader.where(node, Context{}) + " proto=\"" + proto +
                "\": the runtime accepts exactly Simple, LL128 or LL");
    return;
  }
  if (inplace != 0 && inplace != 1) {
    reader.fail(reader.where(node, Context{}) + " inplace=\"" + std::to_string(inplace) + "\": write 0 or 1");
    return;
  }
  program.in_place = inplace == 1;
  std::int64_t bytes = 0;
  if (node.attribute("minBytes")) {
    if (!reader.integer(node, "minBytes", Context{}, bytes)) return;
    program.min_bytes = bytes;
  }
  if (node.attribute("maxBytes")) {
    if (!reader.integer(node, "maxBytes", Context{}, bytes)) return;
    program.max_bytes = bytes;
  }
  if (node.attribute("nthreads")) {
    int threads = 0;
    if (!reader.integer(node, "nthreads", Context{}, threads)) return;
    program.nthreads = threads;
  }
  for (const pugi::xml_node& child : node.children()) {
    if (std::string(child.name()) != "gpu") {
      reader.fail(reader.where(child, Context{}) + " inside <algo>: only <gpu> elements belong there");
      return;
    }
    program.gpus.emplace_back();
    read_gpu(reader, child, program.gpus.back());
    if (!reader.problem.empty()) return;
  }
}

/// tenet's comment "rank_to_npu: 0 1 2 4": the topology-file NPU of each rank.
void read_rank_mapping(const TextScan& scan, MscclProgram& program) {
  for (const auto& [line, body] : scan.comments) {
    const std::size_t at = body.find("rank_to_npu:");
    if (at == std::string::npos) continue;
    std::istringstream numbers(body.substr(at + 12));
    std::uint64_t id = 0;
    while (numbers >> id) program.rank_to_npu.push_back(static_cast<NodeId>(id));
    return;
  }
}

/// tenet's comment "tenet ...: ..., made for 64 MiB (67108864 bytes), ...": the size in bytes.
void read_size(const TextScan& scan, MscclProgram& program) {
  for (const auto& [line, body] : scan.comments) {
    const std::size_t made_for = body.find(", made for ");
    const std::size_t start = body.find_first_not_of(' ');
    if (start == std::string::npos || body.compare(start, 6, "tenet ") != 0 || made_for == std::string::npos) continue;
    const std::size_t open = body.find('(', made_for);
    const std::size_t close = body.find(" bytes)", made_for);
    if (open == std::string::npos || close == std::string::npos || close <= open + 1) return;
    std::uint64_t bytes = 0;
    const auto [end, error] = std::from_chars(body.data() + open + 1, body.data() + close, bytes);
    if (error == std::errc() && end == body.data() + close && bytes > 0) program.size_bytes = bytes;
    return;
  }
}

}  // namespace

std::string parse_program(const std::string& text, MscclProgram& program) {
  const TextScan scan = scan_text(text);
  if (!scan.problem.empty()) return scan.problem;
  pugi::xml_document document;
  // parse_minimal: no entity decoding and no end-of-line rewriting, like the runtime's reader.
  const pugi::xml_parse_result parsed =
      document.load_buffer(text.data(), text.size(), pugi::parse_minimal, pugi::encoding_utf8);
  TreeReader reader(text);
  if (!parsed) {
    const auto line =
        std::count(text.begin(),
                   text.begin() + std::min<std::ptrdiff_t>(parsed.offset, static_cast<std::ptrdiff_t>(text.size())),
                   '\n') +
        1;
    return "line " + std::to_string(line) + ": not well-formed XML: " + parsed.description();
  }
  int algos = 0;
  for (const pugi::xml_node& child : document.children()) {
    if (child.type() != pugi::node_element) continue;
    if (std::string(child.name()) != "algo") {
      return reader.where(child, Context{}) + " at the top level: the runtime reads only <algo>";
    }
    if (++algos > 1) return reader.where(child, Context{}) + ": a second <algo>; the runtime uses only the first";
    read_algo(reader, child, program);
    if (!reader.problem.empty()) return reader.problem;
  }
  if (algos == 0) return "no <algo> element";
  read_rank_mapping(scan, program);
  read_size(scan, program);
  return "";
}

}  // namespace tenet::msccl_detail

namespace tenet {

MscclProgram parse_msccl_xml(const std::string& text, const std::string& source) {
  MscclProgram program;
  const std::string problem = msccl_detail::parse_program(text, program);
  if (!problem.empty()) throw InputError(source, "", problem);
  return program;
}

}  // namespace tenet
