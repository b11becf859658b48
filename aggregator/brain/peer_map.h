// The link peers of the current topology, as the fault-pattern matcher's PeerResolver needs them
// (lib/brain/patterns.h: scope link_both_ends, root cause link): entity -> the entity at the other end of
// its link, entities named as docs/brain.md "Entity ids" says.
//
// Contract: build_peer_map(topology) answers both directions of every link whose ends are named: a
// switch-to-switch link `<lower>/<lower_port>` <-> `<upper>/<upper_port>`; a host link (NPU port)
// `<host>/<lower_port>` (the NPU's netdev; the NPU's `port` when the link does not name it) <->
// `<leaf>/<upper_port>`. A link with an end whose port is unknown is left out. Pure; O(links).
#pragma once

#include <string>
#include <unordered_map>

#include "topology/topology.h"

namespace hsns::brain_pipeline {

std::unordered_map<std::string, std::string> build_peer_map(const topology::Topology& topology);

}  // namespace hsns::brain_pipeline
