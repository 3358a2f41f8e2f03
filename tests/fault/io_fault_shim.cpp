// LD_PRELOAD shim of the fault suite: file-system calls on paths under one directory fail with a
// chosen errno from a chosen call on, as when the disk fills up or the directory turns read-only.
//
//   KFORGE_IOFAULT_DIR=<dir>       only calls on paths under <dir> (absolute) are counted and failed
//   KFORGE_IOFAULT_KIND=write      data calls fail: write, writev, pwrite, pwritev, fsync, fdatasync
//                                  on a descriptor open on such a path (a full disk)
//   KFORGE_IOFAULT_KIND=mutate     namespace calls fail: open/fopen for writing, creat, mkdir, rename,
//                                  link, symlink, unlink, rmdir, remove, truncate (a read-only
//                                  directory: descriptors already open keep working, as after chmod)
//   KFORGE_IOFAULT_ERRNO=<name>    ENOSPC, EROFS, EACCES, EDQUOT or EIO (default ENOSPC)
//   KFORGE_IOFAULT_AFTER=<text>    the first call of that kind on a path containing <text> arms the
//                                  fault (default: armed from the start)
//   KFORGE_IOFAULT_NTH=<n>         the n-th call of that kind counted from the arming one (1-based,
//                                  default 1) is the first to fail; every later one fails too; 0:
//                                  none fails, each one is logged as "ok" (to choose n)
//   KFORGE_IOFAULT_RANK=<r>        only in the process whose RANK is r
//   KFORGE_IOFAULT_LOG=<file>      each failed call appends "<pid> <call> <errno name> <path>" to <file>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#define SHIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

enum class Kind { none, write, mutate };

struct Plan {
  Kind kind = Kind::none;
  std::string dir, after, log, errno_name = "ENOSPC";
  int error = ENOSPC;
  long nth = 1;
};

Plan read_plan() {
  Plan plan;
  const char* dir = std::getenv("KFORGE_IOFAULT_DIR");
  const char* kind = std::getenv("KFORGE_IOFAULT_KIND");
  if (dir == nullptr || *dir == '\0' || kind == nullptr) return plan;
  if (const char* only = std::getenv("KFORGE_IOFAULT_RANK")) {
    const char* rank = std::getenv("RANK");
    if (std::strcmp(rank ? rank : "0", only) != 0) return plan;
  }
  plan.dir = dir;
  while (plan.dir.size() > 1 && plan.dir.back() == '/') plan.dir.pop_back();
  plan.kind = std::strcmp(kind, "write") == 0    ? Kind::write
              : std::strcmp(kind, "mutate") == 0 ? Kind::mutate
                                                 : Kind::none;
  if (const char* name = std::getenv("KFORGE_IOFAULT_ERRNO")) {
    const std::pair<const char*, int> known[] = {
        {"ENOSPC", ENOSPC}, {"EROFS", EROFS}, {"EACCES", EACCES}, {"EDQUOT", EDQUOT}, {"EIO", EIO}};
    for (const auto& [n, e] : known) {
      if (std::strcmp(name, n) == 0) plan.errno_name = n, plan.error = e;
    }
  }
  if (const char* after = std::getenv("KFORGE_IOFAULT_AFTER")) plan.after = after;
  if (const char* nth = std::getenv("KFORGE_IOFAULT_NTH")) plan.nth = std::max(0L, std::atol(nth));
  if (const char* log = std::getenv("KFORGE_IOFAULT_LOG")) plan.log = log;
  return plan;
}

std::atomic<bool> g_armed{false};
std::atomic<long> g_counted{0};

// Read once per process: `kforge launch` forks its workers from the launcher, which loaded this shim, and each worker
// sets its environment (RANK) before it touches a file, so its first call re-reads the plan and restarts the count.
const Plan& plan() {
  static std::mutex mutex;
  static Plan p;
  static pid_t reader = 0;
  std::lock_guard<std::mutex> lock(mutex);
  if (reader != ::getpid()) {
    p = read_plan();
    reader = ::getpid();
    g_armed.store(false);
    g_counted.store(0);
  }
  return p;
}
std::mutex g_log_mutex;

template <class Fn>
Fn next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

bool under_dir(const std::string& path) {
  const std::string& dir = plan().dir;
  return path.compare(0, dir.size(), dir) == 0 && (path.size() == dir.size() || path[dir.size()] == '/');
}

// An absolute path for `path` relative to `dirfd` (AT_FDCWD: the working directory).
std::string absolute(int dirfd, const char* path) {
  if (path == nullptr) return {};
  if (path[0] == '/') return path;
  char link[64], target[4096];
  std::snprintf(link, sizeof(link), dirfd == AT_FDCWD ? "/proc/self/cwd" : "/proc/self/fd/%d", dirfd);
  const ssize_t n = ::readlink(link, target, sizeof(target) - 1);
  if (n <= 0) return path;
  return std::string(target, static_cast<size_t>(n)) + "/" + path;
}

std::string path_of_fd(int fd) {
  char link[64], target[4096];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, target, sizeof(target) - 1);
  return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
}

void log_call(const char* call, const std::string& result, const std::string& path) {
  if (plan().log.empty()) return;
  const std::lock_guard<std::mutex> lock(g_log_mutex);
  static auto real_open = next<int (*)(const char*, int, ...)>("open");
  static auto real_write = next<ssize_t (*)(int, const void*, size_t)>("write");
  const int fd = real_open(plan().log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string line = std::to_string(::getpid()) + " " + call + " " + result + " " + path + "\n";
  (void)real_write(fd, line.data(), line.size());
  ::close(fd);
}

// True when this call, of `kind` on `path`, must fail (errno is then set).
bool fails(Kind kind, const char* call, const std::string& path) {
  if (plan().kind != kind || path.empty() || !under_dir(path)) return false;
  if (!g_armed.load()) {
    if (!plan().after.empty() && path.find(plan().after) == std::string::npos) return false;
    g_armed.store(true);
  }
  const long n = g_counted.fetch_add(1) + 1;
  if (plan().nth == 0) log_call(call, "ok", path);
  if (plan().nth == 0 || n < plan().nth) return false;
  log_call(call, plan().errno_name, path);
  errno = plan().error;
  return true;
}

bool fails_fd(const char* call, int fd) {
  return plan().kind == Kind::write && fails(Kind::write, call, path_of_fd(fd));
}

bool writes(int flags) { return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)) != 0; }

bool fopen_writes(const char* mode) { return mode != nullptr && std::strpbrk(mode, "wa+") != nullptr; }

bool fails_path(const char* call, int dirfd, const char* path) {
  return plan().kind == Kind::mutate && fails(Kind::mutate, call, absolute(dirfd, path));
}

// A call naming two paths (rename): counted once, on the first of them under the directory.
bool fails_paths(const char* call, int fromfd, const char* from, int tofd, const char* to) {
  if (plan().kind != Kind::mutate) return false;
  const std::string source = absolute(fromfd, from);
  return fails(Kind::mutate, call, under_dir(source) ? source : absolute(tofd, to));
}

mode_t mode_arg(int flags, va_list args) { return (flags & (O_CREAT | O_TMPFILE)) != 0 ? va_arg(args, mode_t) : 0; }

}  // namespace

// ---- data calls (KIND=write) --------------------------------------------------------------------
SHIM_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  static auto real = next<ssize_t (*)(int, const void*, size_t)>("write");
  return fails_fd("write", fd) ? -1 : real(fd, buf, n);
}
SHIM_EXPORT ssize_t writev(int fd, const struct iovec* iov, int count) {
  static auto real = next<ssize_t (*)(int, const struct iovec*, int)>("writev");
  return fails_fd("writev", fd) ? -1 : real(fd, iov, count);
}
SHIM_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) {
  static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  return fails_fd("pwrite", fd) ? -1 : real(fd, buf, n, offset);
}
SHIM_EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t offset) {
  static auto real = next<ssize_t (*)(int, const void*, size_t, off64_t)>("pwrite64");
  return fails_fd("pwrite64", fd) ? -1 : real(fd, buf, n, offset);
}
SHIM_EXPORT ssize_t pwritev(int fd, const struct iovec* iov, int count, off_t offset) {
  static auto real = next<ssize_t (*)(int, const struct iovec*, int, off_t)>("pwritev");
  return fails_fd("pwritev", fd) ? -1 : real(fd, iov, count, offset);
}
SHIM_EXPORT int fsync(int fd) {
  static auto real = next<int (*)(int)>("fsync");
  return fails_fd("fsync", fd) ? -1 : real(fd);
}
SHIM_EXPORT int fdatasync(int fd) {
  static auto real = next<int (*)(int)>("fdatasync");
  return fails_fd("fdatasync", fd) ? -1 : real(fd);
}

// ---- namespace calls (KIND=mutate) --------------------------------------------------------------
#define SHIM_OPEN(name)                                                \
  SHIM_EXPORT int name(const char* path, int flags, ...) {             \
    static auto real = next<int (*)(const char*, int, ...)>(#name);    \
    va_list args;                                                      \
    va_start(args, flags);                                             \
    const mode_t mode = mode_arg(flags, args);                         \
    va_end(args);                                                      \
    if (writes(flags) && fails_path(#name, AT_FDCWD, path)) return -1; \
    return real(path, flags, mode);                                    \
  }
SHIM_OPEN(open)
SHIM_OPEN(open64)
#define SHIM_OPENAT(name)                                                \
  SHIM_EXPORT int name(int dirfd, const char* path, int flags, ...) {    \
    static auto real = next<int (*)(int, const char*, int, ...)>(#name); \
    va_list args;                                                        \
    va_start(args, flags);                                               \
    const mode_t mode = mode_arg(flags, args);                           \
    va_end(args);                                                        \
    if (writes(flags) && fails_path(#name, dirfd, path)) return -1;      \
    return real(dirfd, path, flags, mode);                               \
  }
SHIM_OPENAT(openat)
SHIM_OPENAT(openat64)
SHIM_EXPORT int creat(const char* path, mode_t mode) {
  static auto real = next<int (*)(const char*, mode_t)>("creat");
  return fails_path("creat", AT_FDCWD, path) ? -1 : real(path, mode);
}
SHIM_EXPORT FILE* fopen(const char* path, const char* mode) {
  static auto real = next<FILE* (*)(const char*, const char*)>("fopen");
  return fopen_writes(mode) && fails_path("fopen", AT_FDCWD, path) ? nullptr : real(path, mode);
}
SHIM_EXPORT FILE* fopen64(const char* path, const char* mode) {
  static auto real = next<FILE* (*)(const char*, const char*)>("fopen64");
  return fopen_writes(mode) && fails_path("fopen64", AT_FDCWD, path) ? nullptr : real(path, mode);
}
SHIM_EXPORT int mkdir(const char* path, mode_t mode) {
  static auto real = next<int (*)(const char*, mode_t)>("mkdir");
  return fails_path("mkdir", AT_FDCWD, path) ? -1 : real(path, mode);
}
SHIM_EXPORT int mkdirat(int dirfd, const char* path, mode_t mode) {
  static auto real = next<int (*)(int, const char*, mode_t)>("mkdirat");
  return fails_path("mkdirat", dirfd, path) ? -1 : real(dirfd, path, mode);
}
SHIM_EXPORT int rename(const char* from, const char* to) {
  static auto real = next<int (*)(const char*, const char*)>("rename");
  return fails_paths("rename", AT_FDCWD, from, AT_FDCWD, to) ? -1 : real(from, to);
}
SHIM_EXPORT int renameat(int fromfd, const char* from, int tofd, const char* to) {
  static auto real = next<int (*)(int, const char*, int, const char*)>("renameat");
  return fails_paths("renameat", fromfd, from, tofd, to) ? -1 : real(fromfd, from, tofd, to);
}
SHIM_EXPORT int renameat2(int fromfd, const char* from, int tofd, const char* to, unsigned flags) {
  static auto real = next<int (*)(int, const char*, int, const char*, unsigned)>("renameat2");
  return fails_paths("renameat2", fromfd, from, tofd, to) ? -1 : real(fromfd, from, tofd, to, flags);
}
SHIM_EXPORT int link(const char* from, const char* to) {
  static auto real = next<int (*)(const char*, const char*)>("link");
  return fails_path("link", AT_FDCWD, to) ? -1 : real(from, to);
}
SHIM_EXPORT int symlink(const char* target, const char* path) {
  static auto real = next<int (*)(const char*, const char*)>("symlink");
  return fails_path("symlink", AT_FDCWD, path) ? -1 : real(target, path);
}
SHIM_EXPORT int symlinkat(const char* target, int dirfd, const char* path) {
  static auto real = next<int (*)(const char*, int, const char*)>("symlinkat");
  return fails_path("symlinkat", dirfd, path) ? -1 : real(target, dirfd, path);
}
SHIM_EXPORT int unlink(const char* path) {
  static auto real = next<int (*)(const char*)>("unlink");
  return fails_path("unlink", AT_FDCWD, path) ? -1 : real(path);
}
SHIM_EXPORT int unlinkat(int dirfd, const char* path, int flags) {
  static auto real = next<int (*)(int, const char*, int)>("unlinkat");
  return fails_path("unlinkat", dirfd, path) ? -1 : real(dirfd, path, flags);
}
SHIM_EXPORT int rmdir(const char* path) {
  static auto real = next<int (*)(const char*)>("rmdir");
  return fails_path("rmdir", AT_FDCWD, path) ? -1 : real(path);
}
SHIM_EXPORT int remove(const char* path) {
  static auto real = next<int (*)(const char*)>("remove");
  return fails_path("remove", AT_FDCWD, path) ? -1 : real(path);
}
SHIM_EXPORT int truncate(const char* path, off_t length) {
  static auto real = next<int (*)(const char*, off_t)>("truncate");
  return fails_path("truncate", AT_FDCWD, path) ? -1 : real(path, length);
}
