// A store's refusal as the aggregator reports it. Stores speak of their rows; the API speaks of the
// request. Every error a store returns passes through from_store() before it leaves the aggregator
// (handlers that call a store directly, and the services), so every area answers store failures alike.
//
// Contract (pure function):
// - unavailable: the detail says it is the store ("store unavailable: <detail>").
// - invalid on "host" or "npu" becomes unprocessable on that field: the request is well-formed but names
//   a host or NPU the inventory lacks (the store checks it inside its transaction).
// - invalid naming no field names "body".
// - everything else unchanged (not_found, conflict with its field).
#pragma once

#include "hsns/error.h"

namespace hsns::services {

Error from_store(Error error);

}  // namespace hsns::services
