// hsnsd's durable report spool: what the daemon has produced for the aggregator (telemetry reports, flow
// batches) waits here, on disk, until the aggregator has acknowledged it. Payloads are opaque bytes; the
// wire format belongs to the reporter and the aggregator's report route.
//
// Contract:
// - A spool is a directory holding records {seq, kind, epoch, appended_at_ms, payload}. seq is assigned by
//   append(): strictly increasing, continued after a restart and never reused, not even after every record
//   was acknowledged and every segment deleted (the state file keeps the highest seq). epoch is the flow
//   probe's epoch for a flow batch and must be 0 for every other kind.
// - Records are length-framed and checksummed (a sync marker, the length, then CRC-32 of zlib over the
//   length, the header fields and the payload) and appended to segment files. append() returns only after
//   pwritev(2) and fdatasync(2) of the segment; the directory is fsynced whenever a segment is created or
//   removed. Flow batches go to segments of their own ("flow-<first seq>.seg"), every other kind to
//   "report-<first seq>.seg", so that the two can be dropped separately (below).
// - Bounded in bytes (Options::max_bytes, the sum of the segment files). When an append would exceed the
//   bound, whole oldest segments are deleted until the record fits: fully acknowledged ones first, then
//   report segments; flow-batch segments only when no report segment is left. Every dropped unacknowledged
//   record is counted (drops_total, dropped_bytes_total; flow batches also in flow_batch_drops_total) and
//   logged, a flow batch at error level with its epochs: a flow batch is never dropped silently, and only
//   when the bound cannot be met otherwise. A record larger than the bound is refused (too_large), nothing
//   dropped.
// - append_parts(kind, epoch, parts) stores several records of one kind and epoch (consecutive seqs) as one
//   group, all or nothing: each part's payload is streamed into the segment piece by piece by the caller's
//   write function (a 100,000-flow batch is never held in memory; the caller announces each part's exact
//   size first, for the bound), every part but the last carries a "more parts follow" flag in its header,
//   and the call returns after fdatasync of every segment it wrote. open() removes a group cut short by a
//   crash (trailing flow records whose last part is missing; counted as a torn tail): a flow batch split
//   over several reports is in the spool either whole or not at all, and last_flow_epoch() only counts
//   whole groups. The bound makes room for the whole group before the first part is written. A failure
//   cuts off every part written so far (nothing of the group stays).
// - peek(max_bytes) returns the oldest unacknowledged records in seq order, up to max_bytes of payload,
//   and always at least one record when there is one (a record larger than the budget is sent alone).
//   peek_payloads(max_bytes) returns the same records with their payloads left in the segment files
//   (SpoolPayload: read on demand, checksum verified by verify()), so that an upload streams a record from
//   its segment instead of copying it into memory. SpoolPayloadStream reads such a payload front to back
//   and checks the record on the way (header at the first read, checksum before the last bytes are handed
//   out), so that sending a record reads it once: a record that does not hold is never handed out whole.
//   ack(seq) acknowledges every record <= seq; segments whose records are all acknowledged are deleted,
//   except the newest segment of each kind, which appends continue into.
// - The acknowledged seq persists in "state", written by ack() and before any segment is deleted. The file
//   has two slots in separate 4 KiB blocks, each {generation, acked seq, highest seq, highest flow epoch}
//   with its own checksum. A write goes in place to the slot that does not hold the current state, with
//   the next generation: one pwrite(2) and fdatasync(2) on a descriptor the Spool keeps open (no file
//   created, no rename, no directory fsync). Only when the file does not exist is it created, once and
//   atomically (temporary file, fdatasync, rename, directory fsync). A write torn by a crash can damage
//   only the slot it was writing; open() takes the valid slot with the higher generation, so it finds the
//   new state or the one before, never anything else. A state file in the older format (one
//   record "HSNSSTA1") is read as slot 0 with generation 0: the first write goes to slot 1, so the old
//   record holds until a new one is durable. A restart neither resends acknowledged records nor loses
//   unacknowledged ones; resending a record that was delivered but not acknowledged is allowed (the
//   aggregator deduplicates on host and seq). A missing state file, or one with neither slot valid, means
//   nothing is acknowledged (everything still on disk is resent; logged; the latter also counts as
//   corrupt), never lost data.
// - open() after a crash: a torn tail (a partial record or a bad checksum with no valid record after it)
//   of a kind's newest segment is truncated; a corrupt stretch followed by a valid record (found again by
//   its sync marker) is skipped and counted (corrupt_records_total counts such stretches, since open), as
//   is bad data at the end of an older segment; a segment with an unreadable header is set aside
//   (renamed to *.corrupt, counted), never deleted. open() never crashes on what it reads. The highest seq
//   and the highest flow-batch epoch are recovered (last_flow_epoch(), for FlowProbe::recover).
// - Disk full (ENOSPC) or another write error on append: an Error naming the path (unavailable for
//   ENOSPC/EDQUOT, internal otherwise); the partial record is cut off again (ftruncate), nothing already
//   stored is lost, and appends work again once space is back. A failed ack() changes nothing in the Spool
//   (acked_seq(), what peek returns, the segments); the slot it was writing may or may not hold the new
//   acknowledgement after a restart (the other slot keeps the previous one), and the next write goes to
//   that same slot again.
// - The directory is locked (flock) by one Spool at a time; a second open() is refused (conflict).
// - One owner thread; not thread-safe. Errors are values. Destroying a Spool without anything else is a
//   clean close (every append was already durable); there is no separate close().
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hsns/error.h"
#include "hsns/unique_fd.h"

namespace hsns::daemon::report {

enum class SpoolKind : std::uint8_t {
  telemetry_report = 1,
  flow_batch = 2,
};
const char* to_string(SpoolKind kind);

struct SpoolRecord {
  std::uint64_t seq = 0;
  SpoolKind kind = SpoolKind::telemetry_report;
  std::uint64_t epoch = 0;
  std::int64_t appended_at_ms = 0;  // wall clock (Unix ms) when append() took the record
  std::string payload;
};

// A record's payload where it lies in its segment file (peek_payloads). It keeps the segment's file open,
// so it stays readable when the spool drops or deletes the segment meanwhile (records never change once
// written). Thread-compatible: reads are pread(2) at explicit offsets.
class SpoolPayload {
 public:
  friend class SpoolPayloadStream;
  SpoolPayload(std::shared_ptr<const UniqueFd> fd, std::string path, std::uint64_t record_offset,
               std::uint32_t size, std::uint64_t seq)
      : fd_(std::move(fd)), path_(std::move(path)), record_offset_(record_offset), size_(size), seq_(seq) {}
  std::uint64_t size() const { return size_; }
  // Up to n payload bytes from `offset` (< size()); returns how many were read (> 0).
  Result<std::size_t> read(std::uint64_t offset, char* buf, std::size_t n) const;
  // Reads the record (header and payload, in 64 KiB pieces) and checks its marker, length, seq and
  // checksum: an Error (internal) naming the segment when the bytes on disk no longer hold.
  Result<void> verify() const;
  // The whole payload in memory (tests, small records).
  Result<std::string> read_all() const;

 private:
  // The header as read against the spool's index (marker, length, seq): the checksum's start over the
  // header fields, or the Error that the record changed on disk (verify() and SpoolPayloadStream alike).
  Result<std::uint32_t> check_header(const unsigned char* header) const;
  Error checksum_error() const;

  std::shared_ptr<const UniqueFd> fd_;
  std::string path_;
  std::uint64_t record_offset_;  // of the record's header in the file
  std::uint32_t size_;
  std::uint64_t seq_;
};

// Reads a SpoolPayload front to back and checks its record on the way, so that sending a record (an
// HttpBodySource) reads its bytes once instead of once to verify and once to send:
// - read(0, ...) reads the record's header with the first bytes (one preadv(2)) and checks its marker,
//   length and seq against the spool's index, then starts the checksum; every read extends it. The read
//   that would hand out the payload's last bytes first compares the checksum and on a mismatch returns an
//   Error instead of them, so a record that changed on disk is never handed out complete (a body cut short
//   never reaches the receiver whole).
// - Reads continue where the previous one ended; a read at 0 starts over (an HTTP client resends a body
//   on a fresh connection). A read at any other offset, or at or past size(), is an Error.
// - corrupt(): whether the last failure was the record's own: its header changed, its checksum fails, or
//   its bytes cannot be read (an I/O error, the file shorter than the index says). Such a record can never
//   be sent right. False for a read at an unexpected offset (the caller's mistake) and after a read at 0
//   starts over.
// - An empty payload has nothing to read (no read is valid); SpoolPayload::verify() checks its header.
// - Not thread-safe: one reader at a time (the HTTP client sending the body).
class SpoolPayloadStream {
 public:
  explicit SpoolPayloadStream(SpoolPayload payload) : payload_(std::move(payload)) {}
  std::uint64_t size() const { return payload_.size(); }
  // Up to n payload bytes from `offset` (0, or where the previous read ended); how many (> 0).
  Result<std::size_t> read(std::uint64_t offset, char* buf, std::size_t n);
  bool corrupt() const { return corrupt_; }

 private:
  Result<std::size_t> fail_record(Error error);

  SpoolPayload payload_;
  bool started_ = false;      // the header was checked and reads continue at next_
  std::uint64_t next_ = 0;    // the payload offset the next read continues at
  std::uint32_t crc_ = 0;     // of the header fields and the payload bytes read so far
  std::uint32_t stored_ = 0;  // the record's checksum from its header
  bool corrupt_ = false;
};

struct SpoolEntry {
  std::uint64_t seq = 0;
  SpoolKind kind = SpoolKind::telemetry_report;
  std::uint64_t epoch = 0;
  std::int64_t appended_at_ms = 0;
  bool more_parts = false;  // a part of a group (append_parts) that is not its last
  SpoolPayload payload;
};

// Writes one part's payload into its record (append_parts): pieces in order, together exactly the size
// the part announced.
class SpoolSink {
 public:
  Result<void> write(std::string_view bytes);

 private:
  friend class Spool;
  SpoolSink(int fd, const std::string& path, std::uint64_t offset, std::uint64_t size, std::uint32_t crc)
      : fd_(fd), path_(path), offset_(offset), size_(size), crc_(crc) {}
  int fd_;
  const std::string& path_;
  std::uint64_t offset_;  // of the payload in the file
  std::uint64_t size_;
  std::uint32_t crc_;
  std::uint64_t written_ = 0;
};

// The parts of a group (append_parts): part i gets seq first_seq + i; size(seq, i) is its exact payload
// size and write(seq, i, sink) writes exactly that many bytes through sink.
struct SpoolParts {
  std::size_t count = 0;
  std::function<std::uint64_t(std::uint64_t seq, std::size_t part)> size;
  std::function<Result<void>(std::uint64_t seq, std::size_t part, SpoolSink& sink)> write;
};

struct SpoolOptions {
  std::string dir;
  std::uint64_t max_bytes = 256ULL << 20;        // bound on the segment files together
  std::uint64_t segment_bytes = 8ULL << 20;      // a segment is closed once it holds this much
  std::uint64_t max_record_bytes = 64ULL << 20;  // larger payloads are refused; also bounds open()'s reads
  // Wall clock in Unix ms (tests replace it).
  std::function<std::int64_t()> now_ms;
};

struct SpoolStats {
  std::uint64_t records = 0;     // unacknowledged records
  std::uint64_t bytes = 0;       // their payload bytes
  std::uint64_t disk_bytes = 0;  // segment files together (what max_bytes bounds)
  std::uint64_t segments = 0;
  std::int64_t oldest_unacked_age_ms = 0;  // 0 when nothing is waiting
  std::uint64_t drops_total = 0;           // unacknowledged records dropped by the bound (since open)
  std::uint64_t dropped_bytes_total = 0;   // their payload bytes
  std::uint64_t flow_batch_drops_total = 0;
  std::uint64_t corrupt_records_total = 0;  // corrupt stretches skipped and segments set aside by open()
  std::uint64_t torn_tails_total = 0;       // torn tails truncated by open()
  std::uint64_t last_seq = 0;
  std::uint64_t acked_seq = 0;
};

class Spool {
 public:
  // Creates the directory when missing. Fails when it cannot be created or locked, or a segment cannot
  // be read at all; corrupt content is skipped and counted, not an error.
  static Result<std::unique_ptr<Spool>> open(SpoolOptions options);

  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;
  ~Spool();

  // Stores the record durably and returns its seq.
  Result<std::uint64_t> append(SpoolKind kind, std::uint64_t epoch, std::string_view payload);
  // Stores parts.count records as one group (see the contract); returns the seq of the first.
  Result<std::uint64_t> append_parts(SpoolKind kind, std::uint64_t epoch, const SpoolParts& parts);
  // The oldest unacknowledged records, in seq order, up to max_bytes of payload (at least one).
  Result<std::vector<SpoolRecord>> peek(std::uint64_t max_bytes) const;
  // The same records, their payloads read on demand from the segment files.
  Result<std::vector<SpoolEntry>> peek_payloads(std::uint64_t max_bytes) const;
  // Acknowledges every record <= seq (a seq at or below the acknowledged one changes nothing; one above
  // the highest assigned seq is refused).
  Result<void> ack(std::uint64_t seq);

  SpoolStats stats() const;
  std::uint64_t last_seq() const { return last_seq_; }
  std::uint64_t acked_seq() const { return acked_seq_; }
  // The highest epoch of any flow batch the spool has taken (0: none).
  std::uint64_t last_flow_epoch() const { return last_flow_epoch_; }
  const std::string& dir() const { return opt_.dir; }

 private:
  // What open() and append() know of one record and one segment file.
  struct RecordRef {
    std::uint64_t seq;
    SpoolKind kind;
    std::uint64_t epoch;
    std::int64_t appended_at_ms;
    std::uint64_t offset;  // of the payload in the file
    std::uint32_t payload_len;
    bool more = false;  // a group's part that is not its last
  };
  struct Segment {
    std::string path;
    std::shared_ptr<const UniqueFd> fd;  // shared with the SpoolPayloads peeked from it
    std::uint64_t size = 0;              // valid bytes (header and whole records)
    bool flow = false;
    bool sealed = false;  // no more appends (full, or a failed write could not be cut off)
    std::vector<RecordRef> records;
  };

  Spool(SpoolOptions options, UniqueFd dir_fd);
  Result<void> load();
  Result<void> load_segment(const std::string& name, bool flow, std::uint64_t first_seq, bool newest);
  // Writes {acked, last_seq_, last_flow_epoch_} to the state slot not holding the current state (creates
  // the file when there is none).
  Result<void> write_state(std::uint64_t acked);
  Result<void> create_state(const unsigned char* slot, std::size_t size);
  // Drops oldest segments until `framed` bytes fit; `parts` > 1 reserves a segment header per part (a
  // group may open a segment for each).
  Result<void> make_room(std::uint64_t framed, bool for_flow, std::size_t parts = 1);
  // Removes a group of parts a crash cut short (trailing flow records with `more` set).
  Result<void> cut_incomplete_group();
  Result<void> drop_oldest(std::deque<Segment>& segments);
  bool needs_new_segment(const std::deque<Segment>& segments, std::uint64_t framed) const;
  Result<Segment*> writable_segment(bool flow, std::uint64_t framed, std::uint64_t seq);
  void delete_acked_segments();
  Result<void> sync_dir() const;
  std::uint64_t disk_bytes() const;

  SpoolOptions opt_;
  UniqueFd dir_fd_;
  std::optional<UniqueFd> state_fd_;  // the state file, open for in-place writes once it exists
  int state_slot_ = -1;               // the slot holding the current state (-1: neither is valid)
  std::uint64_t state_gen_ = 0;       // its generation (0: none, or the older single-record format)
  std::deque<Segment> reports_;
  std::deque<Segment> flows_;
  std::uint64_t last_seq_ = 0;
  std::uint64_t acked_seq_ = 0;
  std::uint64_t last_flow_epoch_ = 0;
  std::uint64_t drops_ = 0;
  std::uint64_t dropped_bytes_ = 0;
  std::uint64_t flow_drops_ = 0;
  std::uint64_t corrupt_ = 0;
  std::uint64_t torn_ = 0;
};

}  // namespace hsns::daemon::report
