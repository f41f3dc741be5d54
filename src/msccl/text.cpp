// SPDX-License-Identifier: MIT
// The MSCCL runtime's XML reader, as rules (SPEC section 2, src/graph/xml.cc). It is not an XML
// parser: it accepts a strict subset of XML and fails on much that XML allows (tabs, declarations,
// tags over several lines, single quotes, two spaces in a row). This scanner walks the text the way
// that reader does and names the first thing it would stop at, so a file that passes here loads;
// pugixml then builds the tree (parse.cpp).

#include <cstdio>
#include <string>

#include "internal.hpp"
#include "tenet/common/error.hpp"

namespace tenet {

MscclProtocol parse_msccl_protocol(const std::string& text, const std::string& option) {
  if (text == "Simple") return MscclProtocol::kSimple;
  if (text == "LL") return MscclProtocol::kLL;
  if (text == "LL128") return MscclProtocol::kLL128;
  const std::string suggestion = closest_match(text, {"Simple", "LL", "LL128"});
  std::string message = "unknown protocol '" + text + "'";
  if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
  message += "; the MSCCL runtime knows Simple, LL and LL128";
  throw InputError("", option, message);
}

std::string msccl_protocol_name(MscclProtocol protocol) {
  switch (protocol) {
    case MscclProtocol::kSimple: return "Simple";
    case MscclProtocol::kLL: return "LL";
    case MscclProtocol::kLL128: return "LL128";
  }
  return "Simple";
}

std::uint32_t msccl_fifo_calls(MscclProtocol protocol) { return protocol == MscclProtocol::kSimple ? 2 : 8; }

const char* msccl_step_type_name(MscclStepType type) {
  switch (type) {
    case MscclStepType::kSend: return "s";
    case MscclStepType::kRecv: return "r";
    case MscclStepType::kRecvCopySend: return "rcs";
    case MscclStepType::kRecvReduceSend: return "rrs";
    case MscclStepType::kRecvReduceCopy: return "rrc";
    case MscclStepType::kRecvReduceCopySend: return "rrcs";
    case MscclStepType::kCopy: return "cpy";
    case MscclStepType::kReduce: return "re";
    case MscclStepType::kResAdd: return "ra";
    case MscclStepType::kNop: return "nop";
  }
  return "nop";
}

const char* msccl_buffer_name(MscclBuffer buffer) {
  switch (buffer) {
    case MscclBuffer::kInput: return "i";
    case MscclBuffer::kOutput: return "o";
    case MscclBuffer::kScratch: return "s";
  }
  return "i";
}

}  // namespace tenet

namespace tenet::msccl_detail {
namespace {

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.' || c == ':';
}

std::string describe(char c) {
  switch (c) {
    case '\n': return "a newline";
    case '\r': return "a carriage return";
    case '\t': return "a tab";
    case ' ': return "a space";
    default: break;
  }
  std::string text = "'";
  text += c;
  text += "'";
  return text;
}

/// Walks the text like the runtime's xmlGetNode, keeping the line number.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  TextScan run() {
    TextScan scan;
    if (!check_bytes(scan.problem)) return scan;
    while (true) {
      skip_blanks();
      if (at_end()) break;
      if (peek() != '<') {
        std::string_view rest = text_.substr(pos_, 20);
        rest = rest.substr(0, rest.find_first_of("\n<"));
        scan.problem = at_line("text '" + std::string(rest) +
                               "' between tags: the runtime's reader expects '<' and skips only spaces and newlines");
        return scan;
      }
      if (starts_with("<!--")) {
        const std::size_t close = text_.find("-->", pos_ + 4);
        if (close == std::string_view::npos) {
          scan.problem = at_line("comment never closed with '-->'");
          return scan;
        }
        const int line = line_;
        const std::string_view body = text_.substr(pos_ + 4, close - pos_ - 4);
        for (char c : body) line_ += c == '\n';
        scan.comments.emplace_back(line, std::string(body));
        pos_ = close + 3;
        continue;
      }
      if (starts_with("<?")) {
        scan.problem = at_line(
            "XML declaration or processing instruction '<?': the runtime's reader fails on it (\"expected >, got "
            "'?'\"); "
            "leave it out");
        return scan;
      }
      if (starts_with("<!")) {
        scan.problem = at_line("'<!' that is not a comment (DOCTYPE, CDATA): the runtime's reader cannot read it");
        return scan;
      }
      if (starts_with("</")) {
        if (!closing_tag(scan.problem)) return scan;
      } else if (!opening_tag(scan.problem)) {
        return scan;
      }
    }
    if (!open_.empty()) scan.problem = at_line("<" + open_.back() + "> is never closed");
    return scan;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  bool starts_with(std::string_view prefix) const { return text_.substr(pos_, prefix.size()) == prefix; }
  std::string at_line(const std::string& message) const { return "line " + std::to_string(line_) + ": " + message; }

  /// Plain ASCII without tabs or control characters, no BOM: checked up front, since the reader
  /// trips over them wherever they are.
  bool check_bytes(std::string& problem) {
    int line = 1;
    for (std::size_t i = 0; i < text_.size(); ++i) {
      const auto byte = static_cast<unsigned char>(text_[i]);
      if (i == 0 && text_.substr(0, 3) == "\xEF\xBB\xBF") {
        problem = "line 1: UTF-8 byte order mark: the runtime's reader expects '<' as the first character";
        return false;
      }
      if (byte == '\t') {
        problem = "line " + std::to_string(line) +
                  ": tab character: the runtime's reader skips only spaces and newlines (' ', '\\n', '\\r')";
        return false;
      }
      if (byte >= 0x80 || (byte < 0x20 && byte != '\n' && byte != '\r')) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(byte));
        problem = "line " + std::to_string(line) + ": byte " + hex + " is not printable ASCII: write plain ASCII";
        return false;
      }
      line += byte == '\n';
    }
    return true;
  }

  void skip_blanks() {
    while (!at_end() && (peek() == ' ' || peek() == '\n' || peek() == '\r')) {
      line_ += peek() == '\n';
      ++pos_;
    }
  }

  std::string read_name() {
    const std::size_t begin = pos_;
    while (!at_end() && name_char(peek())) ++pos_;
    return std::string(text_.substr(begin, pos_ - begin));
  }

  bool closing_tag(std::string& problem) {
    pos_ += 2;
    const std::string name = read_name();
    if (peek() != '>') {
      problem = at_line("closing tag </" + name + "> must end directly with '>', found " + describe(peek()));
      return false;
    }
    ++pos_;
    if (open_.empty() || open_.back() != name) {
      problem = at_line("</" + name + "> does not close " +
                        (open_.empty() ? std::string("anything") : "<" + open_.back() + ">") +
                        " (the runtime's reader reports an XML mismatch)");
      return false;
    }
    open_.pop_back();
    return true;
  }

  bool opening_tag(std::string& problem) {
    ++pos_;
    const std::string name = read_name();
    if (name.empty()) {
      problem = at_line("'<' followed by " + describe(peek()) + " instead of an element name");
      return false;
    }
    if (name.size() > static_cast<std::size_t>(kMaxNameLength)) {
      problem = at_line("element name longer than 253 characters");
      return false;
    }
    int attributes = 0;
    while (true) {
      const char c = peek();
      if (c == '>') {
        ++pos_;
        open_.push_back(name);
        return true;
      }
      if (c == '/') {
        ++pos_;
        if (peek() != '>') {
          problem = at_line("in <" + name + ">: '/' must be followed directly by '>'");
          return false;
        }
        ++pos_;
        return true;
      }
      if (c == '\n' || c == '\r') {
        problem =
            at_line("tag <" + name + "> continues on the next line: the runtime's reader needs each tag on one line");
        return false;
      }
      if (c != ' ') {
        problem = at_line("in <" + name + ">: expected ' ', '/>' or '>' after " +
                          (attributes == 0 ? "the name" : "an attribute value") + ", found " + describe(c));
        return false;
      }
      ++pos_;
      const char next = peek();
      if (next == ' ') {
        problem =
            at_line("in <" + name + ">: two spaces in a row (the runtime's reader makes an empty attribute of them)");
        return false;
      }
      if (next == '/' || next == '>') {
        problem = at_line("in <" + name + ">: space before '" + (next == '/' ? "/>" : ">") +
                          "' (the runtime's reader makes an empty attribute of it)");
        return false;
      }
      if (!attribute(name, problem)) return false;
      if (++attributes > kMaxAttributes) {
        problem = at_line("<" + name + "> has more than 16 attributes: the runtime's reader drops the rest silently");
        return false;
      }
    }
  }

  bool attribute(const std::string& element, std::string& problem) {
    const std::string name = read_name();
    if (name.empty()) {
      problem = at_line("in <" + element + ">: expected an attribute name, found " + describe(peek()));
      return false;
    }
    if (name.size() > static_cast<std::size_t>(kMaxNameLength)) {
      problem = at_line("in <" + element + ">: attribute name longer than 253 characters");
      return false;
    }
    if (peek() != '=') {
      problem = at_line("in <" + element + ">: attribute '" + name + "' must be followed directly by '=', found " +
                        describe(peek()));
      return false;
    }
    ++pos_;
    if (peek() == '\'') {
      problem = at_line("in <" + element + ">: attribute '" + name +
                        "' in single quotes: the runtime's reader reads values up to the next '\"'; use double quotes");
      return false;
    }
    if (peek() != '"') {
      problem =
          at_line("in <" + element + ">: value of '" + name + "' must start with '\"', found " + describe(peek()));
      return false;
    }
    ++pos_;
    const std::size_t begin = pos_;
    while (!at_end() && peek() != '"') {
      if (peek() == '\n' || peek() == '\r' || peek() == '<' || peek() == '>') {
        problem = at_line("in <" + element + ">: value of '" + name + "' contains " + describe(peek()) +
                          " before its closing '\"'");
        return false;
      }
      ++pos_;
    }
    if (at_end()) {
      problem = at_line("in <" + element + ">: value of '" + name + "' is never closed");
      return false;
    }
    if (pos_ - begin > static_cast<std::size_t>(kMaxValueLength)) {
      problem = at_line("in <" + element + ">: value of '" + name +
                        "' is longer than 255 characters (it would overflow the runtime's buffer)");
      return false;
    }
    ++pos_;
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
  std::vector<std::string> open_;
};

}  // namespace

TextScan scan_text(std::string_view text) { return Scanner(text).run(); }

}  // namespace tenet::msccl_detail
