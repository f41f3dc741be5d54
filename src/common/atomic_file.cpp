#include "tenet/common/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tenet/common/error.hpp"

namespace tenet {

void write_file_atomically(const std::string& path, const std::string& contents) {
  // The temporary name carries the pid so that parallel runs writing into one folder never share it.
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  std::FILE* file = std::fopen(temporary.c_str(), "wb");
  if (file == nullptr) {
    throw InputError(path, "", std::string("cannot write: ") + std::strerror(errno));
  }
  bool ok = std::fwrite(contents.data(), 1, contents.size(), file) == contents.size();
  ok = (std::fflush(file) == 0) && ok;
  ok = (::fsync(::fileno(file)) == 0) && ok;
  ok = (std::fclose(file) == 0) && ok;
  if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0) {
    int saved = errno;
    std::remove(temporary.c_str());
    throw InputError(path, "", std::string("cannot write: ") + std::strerror(saved));
  }
}

std::string read_file(const std::string& path) {
  std::error_code code;
  if (std::filesystem::is_directory(path, code)) throw InputError(path, "", "is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw InputError(path, "", "cannot read the file");
  return buffer.str();
}

}  // namespace tenet
