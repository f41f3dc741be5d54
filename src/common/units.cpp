// SPDX-License-Identifier: MIT
#include "tenet/common/units.hpp"

#include <cmath>
#include <cstdio>

#include "tenet/common/error.hpp"

namespace tenet {
namespace {

struct Unit {
  const char* suffix;
  double bytes;
};

// Longest suffixes first so that "MiB" is not read as "B".
constexpr Unit kUnits[] = {
    {"KiB", 1024.0},
    {"MiB", 1048576.0},
    {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
    {"PiB", 1125899906842624.0},  // read so that 2PiB gets "larger than the 1PiB", not "not a size"
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"PB", 1e15},
    {"B", 1.0},
};

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::uint64_t parse_size(const std::string& text, const std::string& option) {
  const std::string expected =
      "expected a size such as 32B, 4KiB, 1MB, 64MiB or 1GiB (KB/MB/GB decimal, KiB/MiB/GiB binary)";
  std::string number = text;
  double scale = 1.0;
  for (const Unit& unit : kUnits) {
    if (ends_with(text, unit.suffix)) {
      number = text.substr(0, text.size() - std::string(unit.suffix).size());
      scale = unit.bytes;
      break;
    }
  }
  while (!number.empty() && number.back() == ' ') number.pop_back();
  bool well_formed = !number.empty();
  bool seen_dot = false;
  for (char c : number) {
    if (c == '.' && !seen_dot) {
      seen_dot = true;
    } else if (c < '0' || c > '9') {
      well_formed = false;
    }
  }
  if (!well_formed || number == ".") {
    throw InputError("", option, "'" + text + "' is not a size; " + expected);
  }
  double bytes = std::strtod(number.c_str(), nullptr) * scale;
  if (!(bytes >= 1.0)) throw InputError("", option, "'" + text + "' is zero; a size must be at least 1B");
  if (bytes > static_cast<double>(kMaxSizeBytes)) {
    throw InputError("", option, "'" + text + "' is larger than the 1PiB tenet accepts");
  }
  if (bytes != std::floor(bytes)) {
    throw InputError("", option, "'" + text + "' is not a whole number of bytes");
  }
  return static_cast<std::uint64_t>(bytes);
}

std::string format_size(std::uint64_t bytes) {
  static const char* const kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char text[48];
  if (value == std::floor(value)) {
    std::snprintf(text, sizeof text, "%.0f %s", value, kNames[unit]);
  } else {
    std::snprintf(text, sizeof text, "%.3g %s", value, kNames[unit]);
  }
  return text;
}

std::string format_time_us(double time_us) {
  char text[48];
  if (!std::isfinite(time_us)) {
    std::snprintf(text, sizeof text, "%s", "inf");
  } else if (time_us < 1.0) {
    std::snprintf(text, sizeof text, "%.3g ns", time_us * 1e3);
  } else if (time_us < 1e3) {
    std::snprintf(text, sizeof text, "%.4g us", time_us);
  } else if (time_us < 1e6) {
    std::snprintf(text, sizeof text, "%.4g ms", time_us / 1e3);
  } else {
    std::snprintf(text, sizeof text, "%.4g s", time_us / 1e6);
  }
  return text;
}

}  // namespace tenet
