#include "services/store_errors.h"

#include <utility>

namespace hsns::services {

Error from_store(Error error) {
  switch (error.kind) {
    case Error::Kind::unavailable:
      error.detail = "store unavailable: " + error.detail;
      return error;
    case Error::Kind::invalid: {
      const std::string field = error.field();
      if (field == "host" || field == "npu") return Error::unprocessable(field, std::move(error.detail));
      if (field.empty()) return Error::invalid("body", std::move(error.detail));
      return error;
    }
    default:
      return error;
  }
}

}  // namespace hsns::services
