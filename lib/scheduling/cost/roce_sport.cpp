// The formulas are constexpr in the header; this unit checks a few values at compile time.
#include "scheduling/cost/roce_sport.h"

namespace hsns::cost {

static_assert(roce_flow_label(1, 1) == 1);
static_assert(roce_udp_sport(1, 1) == 0xC001);
static_assert(roce_udp_sport(0, 7) == 0xC000);  // label 0: port 49152
static_assert(roce_flow_label(0x1234, 0x5678) == roce_flow_label(0x5678, 0x1234));

}  // namespace hsns::cost
