// Maps a syslog sender to a device of the current topology (services/topology_cache.h).
//
// Contract: by HOSTNAME first (NameResolver's rules: as sent, lower case, first label), else by the sender's
// address among the switches' management addresses (a line without a hostname, NX-OS's default); else it is
// unknown. The resolver reads the cached model again when the cache's change mark moved
// (TopologyCache::change_mark, an atomic load: a device added by a topology write of this process is found by
// the next message) and otherwise at most once a second (TopologyCache::current() reads the stored revision,
// a database query, which must not run once per message). No topology yet: every sender is unknown.
// Thread-safe.
#pragma once

#include <memory>

#include "ingest/syslog_receiver.h"
#include "services/topology_cache.h"

namespace hsns::ingest {

DeviceResolver topology_device_resolver(std::shared_ptr<services::TopologyCache> cache);

// The subscriber that keeps each message in `buffer`, counting a refused one as dropped (buffer_full).
LogSubscriber keep_in(LogBuffer& buffer, IngestMetrics& metrics);

}  // namespace hsns::ingest
