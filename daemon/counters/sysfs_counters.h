// Counter files under a sysfs root (DaemonConfig::sysfs_root; tests use recorded fixture trees):
//   class/infiniband/<device>/ports/<port>/counters/<name>     InfiniBand PMA port counters (ib core)
//   class/infiniband/<device>/ports/<port>/hw_counters/<name>  the driver's counters (mlx5, rxe, ...)
//   class/net/<netdev>/statistics/<name>                       the netdev's rtnl_link_stats64
//
// Contract:
// - Every file of such a directory is read, by its name; a file holds one unsigned decimal number and a
//   newline. The names below (kRecognisedRdmaCounters) are the ones hsns interprets (docs/hsnsd.md);
//   others are read and reported as they are.
// - Units: port_xmit_data and port_rcv_data count 4-byte words in the kernel; their readings carry scale
//   4, so value * scale is bytes. Every other reading has scale 1. hw_counters/lifespan is the driver's
//   cache lifetime in milliseconds, a setting rather than a counter: it is left out.
// - Widths: counter_width() (counter_delta.h) for counters/, 64 bits for hw_counters/ and statistics/.
// - Bad input never throws: a directory that does not exist is not an error for counters/ and
//   hw_counters/ (rxe has no PMA counters/, older devices no hw_counters/) but is for a port or a netdev
//   that is gone; a file that cannot be read (the kernel answers EINVAL when a PMA query fails) or does
//   not hold a number is skipped and recorded in `errors` with its source ("rdma_counters",
//   "rdma_hw_counters", "netdev_statistics"), its path and the reason. Readings are sorted by name.
// - CounterDirectories: the directories kept open across readings (the counters component reads the same
//   ones every interval). Each reading looks a directory's path up once (stat): a directory that is gone is
//   closed (and the reading is as without it), one that is not the one held open (a netdev deleted and
//   made again, renamed) is opened again; the directory is listed through its descriptor (getdents) and
//   every file opened relative to it (openat), instead of a path built and looked up for each file. The
//   readings and errors are exactly those of the functions without it (paths in errors included).
//   drop_unused() closes the directories no reading used since its previous call.
// - Pure reads; no threads (a CounterDirectories belongs to one thread).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <unordered_map>
#include <vector>

namespace hsns::daemon::counters {

struct CounterReading {
  std::string name;
  std::uint64_t raw = 0;    // as the file holds it
  unsigned width = 64;      // declared width in bits (counter_delta.h)
  std::uint64_t scale = 1;  // raw * scale is the counter in its base unit
  bool operator==(const CounterReading&) const = default;
};

struct ReadError {
  std::string source;  // "rdma_counters", "rdma_hw_counters", "netdev_statistics", "ethtool"
  std::string path;    // the file or netdev
  std::string reason;
};

struct RdmaPortReading {
  std::string device;
  int port = 1;
  std::vector<CounterReading> counters;     // counters/
  std::vector<CounterReading> hw_counters;  // hw_counters/
};

// What hsns interprets, by group (docs/hsnsd.md lists them with their meaning).
struct RecognisedCounter {
  std::string_view name;
  std::string_view group;  // "traffic", "congestion", "loss", "starvation", "link"
  std::string_view meaning;
};
extern const std::vector<RecognisedCounter> kRecognisedRdmaCounters;
const RecognisedCounter* recognised_rdma_counter(std::string_view name);

// One unsigned decimal number and an optional newline; the reason when the file is unreadable or not that.
tl::expected<std::uint64_t, std::string> read_counter_file(const std::string& path);

class CounterDirectories {
 public:
  CounterDirectories() = default;
  ~CounterDirectories();
  CounterDirectories(const CounterDirectories&) = delete;
  CounterDirectories& operator=(const CounterDirectories&) = delete;

  void drop_unused();
  std::size_t open_directories() const { return dirs_.size(); }

  struct Dir {
    int fd = -1;
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    bool used = false;
  };
  // The directory at `path` opened (or kept) when it is a directory; nullptr when it is not, with *error
  // set to the errno when it is one that cannot be opened (0 when there is no directory).
  Dir* open(const std::string& path, int* error);

 private:
  std::unordered_map<std::string, Dir> dirs_;
};

RdmaPortReading read_rdma_port(const std::string& sysfs_root, const std::string& device, int port,
                               std::vector<ReadError>& errors);
std::vector<CounterReading> read_netdev_statistics(const std::string& sysfs_root, const std::string& netdev,
                                                   std::vector<ReadError>& errors);
// The same through directories kept open.
RdmaPortReading read_rdma_port(const std::string& sysfs_root, const std::string& device, int port,
                               std::vector<ReadError>& errors, CounterDirectories& dirs);
std::vector<CounterReading> read_netdev_statistics(const std::string& sysfs_root, const std::string& netdev,
                                                   std::vector<ReadError>& errors, CounterDirectories& dirs);

}  // namespace hsns::daemon::counters
