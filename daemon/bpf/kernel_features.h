// Feature probing before a program is loaded: the kernel must support every program type and map type of
// a BPF object, or the load fails with a clear error naming what is missing (instead of a verifier dump or
// an EINVAL from map creation).
//
// Contract:
// - require_kernel_features(obj, what) checks, after bpf_object__open and before load, each program type
//   (libbpf_probe_bpf_prog_type) and map type (libbpf_probe_bpf_map_type) the object uses. A type the
//   kernel lacks gives Error::unavailable "<what> needs BPF program type sched_cls, which this kernel does
//   not support" (libbpf's name of the type; its number when libbpf has no name). A probe that cannot
//   decide (an error other than "unsupported") is logged at debug and left to the load.
// - require_prog_type / require_map_type check one type, given by its kernel number (a type this build's
//   <linux/bpf.h> does not name, which a newer object may use, is not probed: left to the load); results
//   are cached per process.
// - Thread-safe.
#pragma once

#include <linux/bpf.h>

#include <string>

#include "hsns/error.h"

struct bpf_object;

namespace hsns::daemon::bpf {

Result<void> require_prog_type(int type, const std::string& what);
Result<void> require_map_type(int type, const std::string& what);
Result<void> require_kernel_features(const bpf_object* obj, const std::string& what);

}  // namespace hsns::daemon::bpf
