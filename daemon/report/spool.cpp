#include "spool.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>
#include <system_error>

#include "crc32.h"
#include "hsns/log.h"

namespace hsns::daemon::report {
namespace {

namespace fs = std::filesystem;

// On-disk layout, little-endian.
//   segment: "HSNSSPL1" then records
//   record:  marker u32 | payload length u32 | crc u32 | kind u8 | flags u8 | 2 zero bytes | seq u64 |
//            epoch u64 | appended_at_ms i64 | payload; crc = CRC-32 (zlib) of the length, the bytes after
//            the crc field and the payload. flags bit 0: a part of a group that is not its last (older
//            versions wrote 0 there and ignore it).
//   state:   two slots, at offsets 0 and 4096 (separate blocks: a torn write of one cannot touch the other),
//            each "HSNSSTA2" | generation u64 | acked seq u64 | highest seq u64 | highest flow epoch u64 |
//            crc u32 of the slot's bytes before it; the valid slot with the higher generation holds. The
//            file is created 4096 + 44 bytes long (slot 1 zero, so invalid), so that later writes only
//            overwrite allocated bytes and fdatasync has no size change to commit.
//            Older versions wrote one record, "HSNSSTA1" | acked seq u64 | highest seq u64 | highest flow
//            epoch u64 | crc u32 of the rest, replaced by rename: read as slot 0 with generation 0.
constexpr std::string_view kSegmentMagic = "HSNSSPL1";
constexpr std::size_t kSegmentHeader = 8;
constexpr std::uint32_t kRecordMarker = 0x52534e48;  // "HNSR"
constexpr std::size_t kRecordHeader = 40;
constexpr std::string_view kStateMagicV1 = "HSNSSTA1";
constexpr std::size_t kStateSize = 8 + 8 + 8 + 8 + 4;  // the older single record
constexpr std::string_view kStateMagic = "HSNSSTA2";
constexpr std::size_t kStateSlotSize = 8 + 8 + 8 + 8 + 8 + 4;
constexpr std::size_t kStateSlotStride = 4096;
constexpr std::size_t kStateFileSize = kStateSlotStride + kStateSlotSize;
constexpr char kStateName[] = "state";
constexpr char kStateTemp[] = "state.tmp";  // only while the file is created (older versions: every write)
constexpr unsigned char kFlagMore = 1;
constexpr std::size_t kReadChunk = std::size_t{64} * 1024;

void put_u32(unsigned char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void put_u64(unsigned char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
std::uint32_t get_u32(const unsigned char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

std::uint32_t crc_of(std::uint32_t crc, const unsigned char* p, std::size_t n) {
  return crc32_update(crc, p, n);
}

// The start of a record's checksum: its length field and the header after the crc field.
std::uint32_t header_crc(const unsigned char* header) {
  return crc_of(crc_of(0, header + 4, 4), header + 12, kRecordHeader - 12);
}

// The record's checksum: the header's part, then the payload.
std::uint32_t record_crc(const unsigned char* header, const unsigned char* payload, std::size_t len) {
  return crc_of(header_crc(header), payload, len);
}

Error io_error(const std::string& what, const std::string& path, int err) {
  std::string detail = what + " " + path + ": " + std::strerror(err);
  if (err == ENOSPC || err == EDQUOT) return Error::unavailable(std::move(detail));
  return Error::internal(std::move(detail));
}

// Writes all of [data, data+n) at offset; false with errno set on failure.
bool pwrite_all(int fd, const unsigned char* data, std::size_t n, std::uint64_t offset) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<std::size_t>(w);
    offset += static_cast<std::uint64_t>(w);
  }
  return true;
}

bool pread_all(int fd, unsigned char* data, std::size_t n, std::uint64_t offset) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, data, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO;  // shorter than the index says: the file changed under us
      return false;
    }
    data += r;
    n -= static_cast<std::size_t>(r);
    offset += static_cast<std::uint64_t>(r);
  }
  return true;
}

// Fills the buffers of iov in turn from offset; false with errno set on failure (EIO when the file ends
// first).
bool preadv_all(int fd, iovec* iov, int count, std::uint64_t offset) {
  while (count > 0) {
    const ssize_t r = ::preadv(fd, iov, count, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO;
      return false;
    }
    offset += static_cast<std::uint64_t>(r);
    auto left = static_cast<std::size_t>(r);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<unsigned char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return true;
}

// What a state slot says.
struct StateSlot {
  std::uint64_t generation;
  std::uint64_t acked;
  std::uint64_t last_seq;
  std::uint64_t flow_epoch;
};

// The slot at `offset` of the state file's first n bytes, if whole and its checksum holds.
std::optional<StateSlot> parse_state_slot(const unsigned char* file, std::size_t n, std::size_t offset) {
  if (n < offset + kStateSlotSize) return std::nullopt;
  const unsigned char* p = file + offset;
  if (!std::equal(kStateMagic.begin(), kStateMagic.end(), p) ||
      crc_of(0, p, kStateSlotSize - 4) != get_u32(p + kStateSlotSize - 4))
    return std::nullopt;
  return StateSlot{get_u64(p + 8), get_u64(p + 16), get_u64(p + 24), get_u64(p + 32)};
}

// The older single-record state file at the start of the first n bytes, as generation 0.
std::optional<StateSlot> parse_state_v1(const unsigned char* file, std::size_t n) {
  if (n < kStateSize || !std::equal(kStateMagicV1.begin(), kStateMagicV1.end(), file) ||
      crc_of(0, file, kStateSize - 4) != get_u32(file + kStateSize - 4))
    return std::nullopt;
  return StateSlot{0, get_u64(file + 8), get_u64(file + 16), get_u64(file + 24)};
}

std::string segment_name(bool flow, std::uint64_t first_seq) {
  char digits[21];
  std::snprintf(digits, sizeof digits, "%020llu", static_cast<unsigned long long>(first_seq));
  return std::string(flow ? "flow-" : "report-") + digits + ".seg";
}

// "report-<20 digits>.seg" or "flow-<20 digits>.seg": the class and first seq, nullopt otherwise.
std::optional<std::pair<bool, std::uint64_t>> parse_segment_name(const std::string& name) {
  bool flow = false;
  std::string rest;
  if (name.rfind("flow-", 0) == 0) {
    flow = true;
    rest = name.substr(5);
  } else if (name.rfind("report-", 0) == 0) {
    rest = name.substr(7);
  } else {
    return std::nullopt;
  }
  if (rest.size() != 24 || rest.substr(20) != ".seg") return std::nullopt;
  std::uint64_t seq = 0;
  for (std::size_t i = 0; i < 20; ++i) {
    if (rest[i] < '0' || rest[i] > '9') return std::nullopt;
    seq = seq * 10 + static_cast<std::uint64_t>(rest[i] - '0');
  }
  return std::make_pair(flow, seq);
}

// A record parsed from a segment image.
struct Parsed {
  std::uint64_t seq;
  SpoolKind kind;
  std::uint64_t epoch;
  std::int64_t appended_at_ms;
  std::uint32_t payload_len;
  bool more;
};

// The record at pos if it is whole and its checksum holds.
std::optional<Parsed> parse_record(const std::vector<unsigned char>& image, std::size_t pos,
                                   std::uint64_t max_record) {
  if (image.size() - pos < kRecordHeader) return std::nullopt;
  const unsigned char* h = image.data() + pos;
  if (get_u32(h) != kRecordMarker) return std::nullopt;
  const std::uint32_t len = get_u32(h + 4);
  if (len > max_record || image.size() - pos - kRecordHeader < len) return std::nullopt;
  if (record_crc(h, h + kRecordHeader, len) != get_u32(h + 8)) return std::nullopt;
  return Parsed{get_u64(h + 16),
                static_cast<SpoolKind>(h[12]),
                get_u64(h + 24),
                static_cast<std::int64_t>(get_u64(h + 32)),
                len,
                (h[13] & kFlagMore) != 0};
}

std::int64_t system_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

const char* to_string(SpoolKind kind) {
  switch (kind) {
    case SpoolKind::telemetry_report:
      return "telemetry_report";
    case SpoolKind::flow_batch:
      return "flow_batch";
  }
  return "unknown";
}

Result<std::size_t> SpoolPayload::read(std::uint64_t offset, char* buf, std::size_t n) const {
  if (offset >= size_) return tl::unexpected(Error::internal("read past the record in " + path_));
  const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(n, size_ - offset));
  if (!pread_all(fd_->get(), reinterpret_cast<unsigned char*>(buf), k,
                 record_offset_ + kRecordHeader + offset))
    return tl::unexpected(io_error("read", path_, errno));
  return k;
}

Result<std::uint32_t> SpoolPayload::check_header(const unsigned char* h) const {
  if (get_u32(h) != kRecordMarker || get_u32(h + 4) != size_ || get_u64(h + 16) != seq_)
    return tl::unexpected(Error::internal("the header of record " + std::to_string(seq_) + " in " + path_ +
                                          " changed since the spool indexed it"));
  return header_crc(h);
}

Error SpoolPayload::checksum_error() const {
  return Error::internal("record " + std::to_string(seq_) + " in " + path_ +
                         " fails its checksum (the segment changed on disk)");
}

Result<void> SpoolPayload::verify() const {
  unsigned char h[kRecordHeader];
  if (!pread_all(fd_->get(), h, kRecordHeader, record_offset_))
    return tl::unexpected(io_error("read", path_, errno));
  auto start = check_header(h);
  if (!start) return tl::unexpected(start.error());
  std::uint32_t crc = *start;
  std::vector<unsigned char> chunk(static_cast<std::size_t>(std::min<std::uint64_t>(kReadChunk, size_)));
  for (std::uint64_t at = 0; at < size_;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size_ - at));
    if (!pread_all(fd_->get(), chunk.data(), n, record_offset_ + kRecordHeader + at))
      return tl::unexpected(io_error("read", path_, errno));
    crc = crc_of(crc, chunk.data(), n);
    at += n;
  }
  if (crc != get_u32(h + 8)) return tl::unexpected(checksum_error());
  return {};
}

Result<std::size_t> SpoolPayloadStream::fail_record(Error error) {
  corrupt_ = true;
  started_ = false;
  return tl::unexpected(std::move(error));
}

Result<std::size_t> SpoolPayloadStream::read(std::uint64_t offset, char* buf, std::size_t n) {
  const SpoolPayload& p = payload_;
  if (offset == 0) {
    started_ = false;
    corrupt_ = false;
  } else if (!started_ || offset != next_) {
    return tl::unexpected(Error::internal(
        "record " + std::to_string(p.seq_) + " in " + p.path_ + " read at offset " + std::to_string(offset) +
        (started_ ? ", not where the last read ended (" + std::to_string(next_) + ")"
                  : " before its start was read")));
  }
  if (offset >= p.size_) return tl::unexpected(Error::internal("read past the record in " + p.path_));
  const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(n, p.size_ - offset));
  auto* out = reinterpret_cast<unsigned char*>(buf);
  if (offset == 0) {
    // The header and the first bytes in one call.
    unsigned char h[kRecordHeader];
    iovec iov[2] = {{h, kRecordHeader}, {out, k}};
    if (!preadv_all(p.fd_->get(), iov, 2, p.record_offset_))
      return fail_record(io_error("read", p.path_, errno));
    auto start = p.check_header(h);
    if (!start) return fail_record(start.error());
    crc_ = *start;
    stored_ = get_u32(h + 8);
    started_ = true;
  } else if (!pread_all(p.fd_->get(), out, k, p.record_offset_ + kRecordHeader + offset)) {
    return fail_record(io_error("read", p.path_, errno));
  }
  crc_ = crc_of(crc_, out, k);
  next_ = offset + k;
  // The last bytes go out only when the whole record holds: a receiver never gets a bad record complete.
  if (next_ == p.size_ && crc_ != stored_) return fail_record(p.checksum_error());
  return k;
}

Result<std::string> SpoolPayload::read_all() const {
  std::string out(size_, '\0');
  if (size_ > 0 && !pread_all(fd_->get(), reinterpret_cast<unsigned char*>(out.data()), size_,
                              record_offset_ + kRecordHeader))
    return tl::unexpected(io_error("read", path_, errno));
  return out;
}

Result<void> SpoolSink::write(std::string_view bytes) {
  if (bytes.size() > size_ - written_)
    return tl::unexpected(Error::internal("a spool record's writer wrote more than the " +
                                          std::to_string(size_) + " bytes it announced"));
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  if (!pwrite_all(fd_, p, bytes.size(), offset_ + written_))
    return tl::unexpected(io_error("append to", path_, errno));
  crc_ = crc_of(crc_, p, bytes.size());
  written_ += bytes.size();
  return {};
}

Spool::Spool(SpoolOptions options, UniqueFd dir_fd) : opt_(std::move(options)), dir_fd_(std::move(dir_fd)) {
  if (!opt_.now_ms) opt_.now_ms = system_now_ms;
}

Spool::~Spool() = default;

Result<std::unique_ptr<Spool>> Spool::open(SpoolOptions options) {
  if (options.dir.empty()) return tl::unexpected(Error::invalid("dir", "the spool directory is empty"));
  if (options.segment_bytes == 0) return tl::unexpected(Error::invalid("segment_bytes", "must be > 0"));
  if (options.max_bytes < kSegmentHeader + kRecordHeader + 1) {
    return tl::unexpected(Error::invalid("max_bytes", "too small for one record"));
  }
  if (options.max_record_bytes == 0 || options.max_record_bytes > 0xffffffffULL) {
    return tl::unexpected(Error::invalid("max_record_bytes", "must be between 1 and 4294967295"));
  }
  std::error_code ec;
  fs::create_directories(options.dir, ec);
  if (ec) return tl::unexpected(Error::internal("create " + options.dir + ": " + ec.message()));
  UniqueFd dir_fd(::open(options.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() < 0) return tl::unexpected(io_error("open", options.dir, errno));
  if (::flock(dir_fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return tl::unexpected(Error::conflict("dir", options.dir + " is in use by another spool"));
    }
    return tl::unexpected(io_error("lock", options.dir, errno));
  }
  std::unique_ptr<Spool> spool(new Spool(std::move(options), std::move(dir_fd)));
  if (auto loaded = spool->load(); !loaded) return tl::unexpected(loaded.error());
  return spool;
}

Result<void> Spool::load() {
  const std::string state_path = opt_.dir + "/" + kStateName;
  // The state file: acked seq and the floors of seq and flow epoch.
  std::uint64_t state_last_seq = 0;
  std::uint64_t state_epoch = 0;
  {
    UniqueFd fd(::open(state_path.c_str(), O_RDWR | O_CLOEXEC));
    if (fd.get() < 0) {
      if (errno != ENOENT) return tl::unexpected(io_error("open", state_path, errno));
      HSNS_LOG(info) << "report spool " << opt_.dir << ": no state file, nothing acknowledged yet";
    } else {
      unsigned char buf[kStateFileSize];
      std::size_t n = 0;
      while (n < sizeof buf) {
        const ssize_t r = ::pread(fd.get(), buf + n, sizeof buf - n, static_cast<off_t>(n));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
          HSNS_LOG(warning) << "report spool: cannot read " << state_path << ": " << std::strerror(errno);
          n = 0;  // as if neither slot were valid
          break;
        }
        if (r == 0) break;
        n += static_cast<std::size_t>(r);
      }
      std::optional<StateSlot> slots[2] = {parse_state_slot(buf, n, 0),
                                           parse_state_slot(buf, n, kStateSlotStride)};
      if (!slots[0]) slots[0] = parse_state_v1(buf, n);
      int pick = slots[0] ? 0 : -1;
      if (slots[1] && (!slots[0] || slots[1]->generation > slots[0]->generation)) pick = 1;
      if (pick >= 0) {
        const StateSlot& st = *slots[pick];
        acked_seq_ = st.acked;
        state_last_seq = st.last_seq;
        state_epoch = st.flow_epoch;
        state_slot_ = pick;
        state_gen_ = st.generation;
      } else {
        ++corrupt_;
        HSNS_LOG(warning) << "report spool: " << state_path
                          << " is unreadable (no slot whole with a good checksum); every record on disk "
                             "is resent";
      }
      state_fd_.emplace(fd.release());
    }
  }
  // Left by a crash while the state file was created (or by an older version, which wrote every state so).
  ::unlink((opt_.dir + "/" + kStateTemp).c_str());

  std::map<std::uint64_t, std::string> names[2];  // [flow] first seq -> name
  std::error_code ec;
  for (fs::directory_iterator it(opt_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (auto parsed = parse_segment_name(name)) names[parsed->first ? 1 : 0][parsed->second] = name;
  }
  if (ec) return tl::unexpected(Error::internal("list " + opt_.dir + ": " + ec.message()));
  for (int flow = 0; flow < 2; ++flow) {
    std::size_t i = 0;
    for (const auto& [first, name] : names[flow]) {
      ++i;
      if (auto r = load_segment(name, flow == 1, first, i == names[flow].size()); !r) return r;
    }
  }
  if (auto r = cut_incomplete_group(); !r) return r;
  last_seq_ = std::max({last_seq_, state_last_seq, acked_seq_});
  last_flow_epoch_ = std::max(last_flow_epoch_, state_epoch);
  delete_acked_segments();
  return {};
}

Result<void> Spool::cut_incomplete_group() {
  // A group's parts are the newest flow records (nothing else is appended to flow segments while a group
  // is written); a trailing run of parts flagged `more` lost its last part to a crash. It was never
  // visible to an upload (append_parts returns, and peek sees the group, only once it is all durable).
  std::uint64_t cut = 0;
  for (std::size_t k = flows_.size(); k > 0; --k) {
    Segment& seg = flows_[k - 1];
    std::size_t i = seg.records.size();
    while (i > 0 && seg.records[i - 1].more) --i;
    if (i == seg.records.size() && !seg.records.empty()) break;  // ends with a whole group
    if (seg.records.empty()) continue;                           // an empty newest segment: look further back
    const std::uint64_t at = seg.records[i].offset - kRecordHeader;
    cut += seg.records.size() - i;
    if (::ftruncate(seg.fd->get(), static_cast<off_t>(at)) != 0 || ::fdatasync(seg.fd->get()) != 0)
      return tl::unexpected(io_error("truncate", seg.path, errno));
    seg.records.resize(i);
    seg.size = at;
    if (i > 0) break;  // the group started in this segment
  }
  // Segments the cut left empty go (their names carry seqs that may be handed out again).
  while (flows_.size() > 0 && flows_.back().records.empty() && cut > 0) {
    if (::unlink(flows_.back().path.c_str()) != 0)
      return tl::unexpected(io_error("unlink", flows_.back().path, errno));
    flows_.pop_back();
  }
  if (cut > 0) {
    if (auto r = sync_dir(); !r) return r;
  }
  if (cut > 0) {
    ++torn_;
    HSNS_LOG(warning)
        << "report spool " << opt_.dir << ": removed " << cut
        << " part(s) of a flow batch whose last part a crash cut off (the batch is harvested again)";
  }
  return {};
}

Result<void> Spool::load_segment(const std::string& name, bool flow, std::uint64_t first_seq, bool newest) {
  const std::string path = opt_.dir + "/" + name;
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (fd.get() < 0) return tl::unexpected(io_error("open", path, errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return tl::unexpected(io_error("stat", path, errno));
  std::vector<unsigned char> image(static_cast<std::size_t>(st.st_size));
  if (!image.empty() && !pread_all(fd.get(), image.data(), image.size(), 0)) {
    return tl::unexpected(io_error("read", path, errno));
  }
  if (image.size() < kSegmentHeader) {
    // Cut off while being created: it never held a record.
    ++torn_;
    HSNS_LOG(warning) << "report spool: removing " << path << " (" << image.size()
                      << " bytes, a segment torn while being created)";
    if (::unlink(path.c_str()) != 0) return tl::unexpected(io_error("unlink", path, errno));
    return sync_dir();
  }
  if (!std::equal(kSegmentMagic.begin(), kSegmentMagic.end(), image.begin())) {
    ++corrupt_;
    const std::string aside = path + ".corrupt";
    HSNS_LOG(error) << "report spool: " << path << " has no segment header; set aside as " << aside;
    if (::rename(path.c_str(), aside.c_str()) != 0) return tl::unexpected(io_error("rename", path, errno));
    return sync_dir();
  }

  std::vector<RecordRef> records;
  std::size_t pos = kSegmentHeader;
  std::uint64_t prev_seq = first_seq == 0 ? 0 : first_seq - 1;
  const auto valid_at = [&](std::size_t at) -> std::optional<Parsed> {
    auto rec = parse_record(image, at, opt_.max_record_bytes);
    if (rec && rec->seq > prev_seq) return rec;
    return std::nullopt;
  };
  while (pos < image.size()) {
    if (auto rec = valid_at(pos)) {
      records.push_back(RecordRef{rec->seq, rec->kind, rec->epoch, rec->appended_at_ms, pos + kRecordHeader,
                                  rec->payload_len, rec->more});
      prev_seq = rec->seq;
      // A part that is not a group's last says nothing yet: the group may be cut off (cut_incomplete_group).
      if (rec->kind == SpoolKind::flow_batch && !rec->more)
        last_flow_epoch_ = std::max(last_flow_epoch_, rec->epoch);
      last_seq_ = std::max(last_seq_, rec->seq);
      pos += kRecordHeader + rec->payload_len;
      continue;
    }
    // Look for the next whole record by its marker; what lies between is corrupt.
    std::size_t next = pos + 1;
    for (; next + kRecordHeader <= image.size(); ++next) {
      if (get_u32(image.data() + next) == kRecordMarker && valid_at(next)) break;
    }
    if (next + kRecordHeader <= image.size()) {
      ++corrupt_;
      HSNS_LOG(error) << "report spool: " << path << ": skipping " << (next - pos)
                      << " corrupt bytes at offset " << pos;
      pos = next;
      continue;
    }
    // Nothing valid follows: a torn tail in the newest segment, corruption elsewhere. Either way cut it.
    (newest ? torn_ : corrupt_) += 1;
    HSNS_LOG(warning) << "report spool: " << path << ": truncating " << (image.size() - pos)
                      << " bytes at offset " << pos << (newest ? " (torn tail)" : " (corrupt tail)");
    if (::ftruncate(fd.get(), static_cast<off_t>(pos)) != 0 || ::fdatasync(fd.get()) != 0) {
      return tl::unexpected(io_error("truncate", path, errno));
    }
    image.resize(pos);
  }
  (flow ? flows_ : reports_)
      .push_back(Segment{.path = path,
                         .fd = std::make_shared<const UniqueFd>(std::move(fd)),
                         .size = pos,
                         .flow = flow,
                         .sealed = !newest || pos >= opt_.segment_bytes,
                         .records = std::move(records)});
  return {};
}

Result<void> Spool::sync_dir() const {
  if (::fsync(dir_fd_.get()) != 0) return tl::unexpected(io_error("fsync", opt_.dir, errno));
  return {};
}

Result<void> Spool::write_state(std::uint64_t acked) {
  // Never the slot holding the current state: a write torn by a crash leaves that one valid.
  const int slot = state_slot_ == 0 ? 1 : 0;
  const std::uint64_t generation = state_gen_ + 1;
  unsigned char buf[kStateSlotSize];
  std::copy(kStateMagic.begin(), kStateMagic.end(), buf);
  put_u64(buf + 8, generation);
  put_u64(buf + 16, acked);
  put_u64(buf + 24, last_seq_);
  put_u64(buf + 32, last_flow_epoch_);
  put_u32(buf + kStateSlotSize - 4, crc_of(0, buf, kStateSlotSize - 4));
  if (!state_fd_) {
    if (auto r = create_state(buf, sizeof buf); !r) return r;
  } else {
    const std::string path = opt_.dir + "/" + kStateName;
    if (!pwrite_all(state_fd_->get(), buf, sizeof buf, static_cast<std::uint64_t>(slot) * kStateSlotStride))
      return tl::unexpected(io_error("write", path, errno));
    if (::fdatasync(state_fd_->get()) != 0) return tl::unexpected(io_error("fdatasync", path, errno));
  }
  state_slot_ = slot;
  state_gen_ = generation;
  return {};
}

Result<void> Spool::create_state(const unsigned char* slot, std::size_t size) {
  // Whole before it has its name (a crash leaves the temporary file, which load() removes), and at its
  // full size so that no later write changes the size. `slot` goes to slot 0 (no slot was valid).
  std::vector<unsigned char> file(kStateFileSize, 0);
  std::copy(slot, slot + size, file.begin());
  const std::string temp = opt_.dir + "/" + kStateTemp;
  const std::string path = opt_.dir + "/" + kStateName;
  const auto fail = [&](const char* what) {
    const int err = errno;
    ::unlink(temp.c_str());
    return tl::unexpected(io_error(what, temp, err));
  };
  UniqueFd fd(::open(temp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0640));
  if (fd.get() < 0) return fail("create");
  if (!pwrite_all(fd.get(), file.data(), file.size(), 0)) return fail("write");
  if (::fdatasync(fd.get()) != 0) return fail("fdatasync");
  if (::rename(temp.c_str(), path.c_str()) != 0) return fail("rename");
  // Until the directory is synced the name may not survive a crash: without it the descriptor is not
  // kept, and the next write creates the file again.
  if (auto r = sync_dir(); !r) return r;
  state_fd_.emplace(fd.release());
  return {};
}

std::uint64_t Spool::disk_bytes() const {
  std::uint64_t total = 0;
  for (const auto* segments : {&reports_, &flows_}) {
    for (const auto& s : *segments) total += s.size;
  }
  return total;
}

void Spool::delete_acked_segments() {
  bool removed = false;
  for (auto* segments : {&reports_, &flows_}) {
    // Keep the newest: appends continue there, and it holds the highest seq for the next open().
    while (segments->size() > 1 &&
           (segments->front().records.empty() || segments->front().records.back().seq <= acked_seq_)) {
      if (::unlink(segments->front().path.c_str()) != 0 && errno != ENOENT) {
        HSNS_LOG(warning) << "report spool: cannot remove acknowledged " << segments->front().path << ": "
                          << std::strerror(errno);
        break;
      }
      segments->pop_front();
      removed = true;
    }
  }
  if (removed) {
    if (auto r = sync_dir(); !r) HSNS_LOG(warning) << "report spool: " << r.error().message();
  }
}

Result<void> Spool::drop_oldest(std::deque<Segment>& segments) {
  Segment& victim = segments.front();
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
  std::uint64_t first_epoch = 0;
  std::uint64_t last_epoch = 0;
  for (const auto& r : victim.records) {
    if (r.seq <= acked_seq_) continue;
    if (records == 0) first_epoch = r.epoch;
    last_epoch = r.epoch;
    ++records;
    bytes += r.payload_len;
  }
  // The state file first: the highest seq and flow epoch must survive the segment that holds them.
  if (auto r = write_state(acked_seq_); !r) return r;
  if (::unlink(victim.path.c_str()) != 0) return tl::unexpected(io_error("unlink", victim.path, errno));
  if (records > 0) {
    drops_ += records;
    dropped_bytes_ += bytes;
    if (victim.flow) {
      flow_drops_ += records;
      HSNS_LOG(error) << "report spool over its bound of " << opt_.max_bytes << " bytes: dropped " << records
                      << " unacknowledged flow batches (epochs " << first_epoch << ".." << last_epoch << ", "
                      << bytes << " bytes) from " << victim.path;
    } else {
      HSNS_LOG(warning) << "report spool over its bound of " << opt_.max_bytes << " bytes: dropped "
                        << records << " unacknowledged reports (" << bytes << " bytes) from " << victim.path;
    }
  }
  segments.pop_front();
  return sync_dir();
}

bool Spool::needs_new_segment(const std::deque<Segment>& segments, std::uint64_t framed) const {
  if (segments.empty() || segments.back().sealed) return true;
  const Segment& back = segments.back();
  // An empty segment takes any record, so that one larger than segment_bytes still has a place.
  return !back.records.empty() && back.size + framed > opt_.segment_bytes;
}

Result<void> Spool::make_room(std::uint64_t framed, bool for_flow, std::size_t parts) {
  const auto fully_acked = [&](const std::deque<Segment>& s) {
    return !s.empty() && (s.front().records.empty() || s.front().records.back().seq <= acked_seq_);
  };
  for (;;) {
    const std::uint64_t need =
        framed + (parts > 1 ? parts * kSegmentHeader
                            : (needs_new_segment(for_flow ? flows_ : reports_, framed) ? kSegmentHeader : 0));
    if (disk_bytes() + need <= opt_.max_bytes) return {};
    // Acknowledged data first (costs nothing), then reports, flow batches last.
    if (reports_.empty() && flows_.empty()) return {};  // cannot happen: append() refuses larger records
    const bool reports_go = fully_acked(reports_) || (!fully_acked(flows_) && !reports_.empty());
    if (auto r = drop_oldest(reports_go ? reports_ : flows_); !r) return r;
  }
}

Result<Spool::Segment*> Spool::writable_segment(bool flow, std::uint64_t framed, std::uint64_t seq) {
  auto& segments = flow ? flows_ : reports_;
  if (!needs_new_segment(segments, framed)) return &segments.back();
  if (!segments.empty()) segments.back().sealed = true;
  const std::string path = opt_.dir + "/" + segment_name(flow, seq);
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640));
  if (fd.get() < 0) return tl::unexpected(io_error("create", path, errno));
  if (!pwrite_all(fd.get(), reinterpret_cast<const unsigned char*>(kSegmentMagic.data()), kSegmentHeader,
                  0) ||
      ::fdatasync(fd.get()) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    return tl::unexpected(io_error("write", path, err));
  }
  if (auto r = sync_dir(); !r) {
    ::unlink(path.c_str());
    return tl::unexpected(r.error());
  }
  segments.push_back(Segment{.path = path,
                             .fd = std::make_shared<const UniqueFd>(std::move(fd)),
                             .size = kSegmentHeader,
                             .flow = flow,
                             .sealed = false,
                             .records = {}});
  return &segments.back();
}

Result<std::uint64_t> Spool::append(SpoolKind kind, std::uint64_t epoch, std::string_view payload) {
  SpoolParts one;
  one.count = 1;
  one.size = [&](std::uint64_t, std::size_t) { return std::uint64_t{payload.size()}; };
  one.write = [&](std::uint64_t, std::size_t, SpoolSink& sink) { return sink.write(payload); };
  return append_parts(kind, epoch, one);
}

Result<std::uint64_t> Spool::append_parts(SpoolKind kind, std::uint64_t epoch, const SpoolParts& parts) {
  if (kind != SpoolKind::telemetry_report && kind != SpoolKind::flow_batch) {
    return tl::unexpected(
        Error::invalid("kind", "unknown record kind " + std::to_string(static_cast<int>(kind))));
  }
  if (kind != SpoolKind::flow_batch && epoch != 0) {
    return tl::unexpected(Error::invalid("epoch", "only a flow batch has an epoch"));
  }
  if (parts.count == 0) return tl::unexpected(Error::invalid("parts", "a group needs at least one part"));
  const std::uint64_t first = last_seq_ + 1;
  std::vector<std::uint64_t> sizes(parts.count);
  std::uint64_t framed_total = 0;
  for (std::size_t i = 0; i < parts.count; ++i) {
    sizes[i] = parts.size(first + i, i);
    const std::uint64_t framed = kRecordHeader + sizes[i];
    framed_total += framed;
    if (sizes[i] > opt_.max_record_bytes || framed_total + kSegmentHeader * parts.count > opt_.max_bytes) {
      return tl::unexpected(Error::too_large(
          "a record of " + std::to_string(sizes[i]) + " bytes" +
          (parts.count > 1 ? " (in a group of " + std::to_string(parts.count) + " parts)" : std::string()) +
          " does not fit the report spool's bounds (max_bytes " + std::to_string(opt_.max_bytes) +
          ", max_record_bytes " + std::to_string(opt_.max_record_bytes) + ")"));
    }
  }
  const bool flow = kind == SpoolKind::flow_batch;
  if (auto r = make_room(framed_total, flow, parts.count); !r) return tl::unexpected(r.error());

  // What the group touched, to cut it off again on failure: each segment's size before the group.
  struct Touched {
    Segment* seg;
    std::uint64_t size_before;
    std::size_t records_before;
  };
  std::vector<Touched> touched;
  auto& segments = flow ? flows_ : reports_;
  const std::size_t segments_before = segments.size();
  const bool back_sealed_before = segments_before > 0 && segments.back().sealed;
  const auto roll_back = [&] {
    for (auto it = touched.rbegin(); it != touched.rend(); ++it) {
      // If even the cut fails, no more appends go there (open() truncates the garbage later).
      if (::ftruncate(it->seg->fd->get(), static_cast<off_t>(it->size_before)) != 0) it->seg->sealed = true;
      it->seg->size = it->size_before;
      it->seg->records.resize(it->records_before);
    }
    // Segments the group opened go again (their names carry the group's seqs, which are handed out again).
    while (segments.size() > segments_before) {
      ::unlink(segments.back().path.c_str());
      segments.pop_back();
    }
    if (segments_before > 0 && !back_sealed_before && segments.back().size < opt_.segment_bytes)
      segments.back().sealed = false;
    (void)sync_dir();
  };
  const std::int64_t now = opt_.now_ms();
  for (std::size_t i = 0; i < parts.count; ++i) {
    const std::uint64_t seq = first + i;
    const std::uint64_t framed = kRecordHeader + sizes[i];
    auto seg_or = writable_segment(flow, framed, seq);
    if (!seg_or) {
      roll_back();
      return tl::unexpected(seg_or.error());
    }
    Segment& seg = **seg_or;
    if (touched.empty() || touched.back().seg != &seg)
      touched.push_back({&seg, seg.size, seg.records.size()});

    unsigned char h[kRecordHeader] = {};
    put_u32(h, kRecordMarker);
    put_u32(h + 4, static_cast<std::uint32_t>(sizes[i]));
    h[12] = static_cast<unsigned char>(kind);
    h[13] = i + 1 < parts.count ? kFlagMore : 0;
    put_u64(h + 16, seq);
    put_u64(h + 24, epoch);
    put_u64(h + 32, static_cast<std::uint64_t>(now));
    // The payload streams in after the header's place; the header (with the checksum) is written last.
    SpoolSink sink(seg.fd->get(), seg.path, seg.size + kRecordHeader, sizes[i], header_crc(h));
    Result<void> wrote = parts.write(seq, i, sink);
    if (wrote && sink.written_ != sizes[i])
      wrote =
          tl::unexpected(Error::internal("a spool record's writer wrote " + std::to_string(sink.written_) +
                                         " of the " + std::to_string(sizes[i]) + " bytes it announced"));
    if (wrote) {
      put_u32(h + 8, sink.crc_);
      if (!pwrite_all(seg.fd->get(), h, kRecordHeader, seg.size))
        wrote = tl::unexpected(io_error("append to", seg.path, errno));
    }
    if (!wrote) {
      roll_back();
      return tl::unexpected(wrote.error());
    }
    seg.records.push_back(RecordRef{seq, kind, epoch, now, seg.size + kRecordHeader,
                                    static_cast<std::uint32_t>(sizes[i]), i + 1 < parts.count});
    seg.size += framed;
    if (seg.size >= opt_.segment_bytes) seg.sealed = true;
  }
  for (const auto& t : touched) {
    if (::fdatasync(t.seg->fd->get()) != 0) {
      const int err = errno;
      const std::string path = t.seg->path;
      roll_back();
      return tl::unexpected(io_error("append to", path, err));
    }
  }
  last_seq_ = first + parts.count - 1;
  if (flow) last_flow_epoch_ = std::max(last_flow_epoch_, epoch);
  return first;
}

Result<std::vector<SpoolEntry>> Spool::peek_payloads(std::uint64_t max_bytes) const {
  // Merge the two classes in seq order.
  struct Cursor {
    const std::deque<Segment>* segments;
    std::size_t seg = 0;
    std::size_t rec = 0;
    const Segment* segment() const { return seg < segments->size() ? &(*segments)[seg] : nullptr; }
    const RecordRef* current() {
      while (const Segment* s = segment()) {
        if (rec < s->records.size()) return &s->records[rec];
        ++seg;
        rec = 0;
      }
      return nullptr;
    }
  };
  Cursor cursors[2] = {{&reports_}, {&flows_}};
  for (auto& c : cursors) {
    while (const RecordRef* r = c.current()) {
      if (r->seq > acked_seq_) break;
      ++c.rec;
    }
  }
  std::vector<SpoolEntry> out;
  std::uint64_t used = 0;
  for (;;) {
    const RecordRef* a = cursors[0].current();
    const RecordRef* b = cursors[1].current();
    if (a == nullptr && b == nullptr) break;
    Cursor& c = (b == nullptr || (a != nullptr && a->seq < b->seq)) ? cursors[0] : cursors[1];
    const RecordRef& ref = *c.current();
    if (!out.empty() && used + ref.payload_len > max_bytes) break;
    const Segment& seg = *c.segment();
    out.push_back(
        SpoolEntry{ref.seq, ref.kind, ref.epoch, ref.appended_at_ms, ref.more,
                   SpoolPayload(seg.fd, seg.path, ref.offset - kRecordHeader, ref.payload_len, ref.seq)});
    used += ref.payload_len;
    ++c.rec;
  }
  return out;
}

Result<std::vector<SpoolRecord>> Spool::peek(std::uint64_t max_bytes) const {
  auto entries = peek_payloads(max_bytes);
  if (!entries) return tl::unexpected(entries.error());
  std::vector<SpoolRecord> out;
  out.reserve(entries->size());
  for (const auto& e : *entries) {
    auto payload = e.payload.read_all();
    if (!payload) return tl::unexpected(payload.error());
    out.push_back(SpoolRecord{e.seq, e.kind, e.epoch, e.appended_at_ms, std::move(*payload)});
  }
  return out;
}

Result<void> Spool::ack(std::uint64_t seq) {
  if (seq <= acked_seq_) return {};
  if (seq > last_seq_) {
    return tl::unexpected(Error::invalid("seq", "acknowledges " + std::to_string(seq) +
                                                    " beyond the last record " + std::to_string(last_seq_)));
  }
  if (auto r = write_state(seq); !r) return r;
  acked_seq_ = seq;
  delete_acked_segments();
  return {};
}

SpoolStats Spool::stats() const {
  SpoolStats s;
  std::optional<std::int64_t> oldest;
  for (const auto* segments : {&reports_, &flows_}) {
    bool first = true;
    for (const auto& seg : *segments) {
      ++s.segments;
      s.disk_bytes += seg.size;
      for (const auto& r : seg.records) {
        if (r.seq <= acked_seq_) continue;
        ++s.records;
        s.bytes += r.payload_len;
        if (first && (!oldest || r.appended_at_ms < *oldest)) oldest = r.appended_at_ms;
        first = false;
      }
    }
  }
  if (oldest) s.oldest_unacked_age_ms = std::max<std::int64_t>(0, opt_.now_ms() - *oldest);
  s.drops_total = drops_;
  s.dropped_bytes_total = dropped_bytes_;
  s.flow_batch_drops_total = flow_drops_;
  s.corrupt_records_total = corrupt_;
  s.torn_tails_total = torn_;
  s.last_seq = last_seq_;
  s.acked_seq = acked_seq_;
  return s;
}

}  // namespace hsns::daemon::report
