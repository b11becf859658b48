#include "store/sqlite_address_book.h"

#include "store/sql_helpers.h"

namespace hsns::store {

StoreResult<void> SqlitePortAddressBook::scan_held(const IpRange& range,
                                                   const std::function<bool(const IpAddress&)>& visit) {
  // An index range scan on UNIQUE (subnet_id, ip_key); visit stops it at the first gap.
  HSNS_STORE_ASSIGN(st, sql::prepare(c_,
                                     "SELECT ip_key FROM ports WHERE subnet_id = ?1 AND ip_key >= ?2 AND "
                                     "ip_key <= ?3 ORDER BY ip_key"));
  st->bind_text(1, port_.subnet_id).bind_text(2, range.first.sort_key()).bind_text(3, range.last.sort_key());
  for (;;) {
    HSNS_STORE_ASSIGN(row, sql::step(*st));
    if (!*row) return {};
    const auto held = IpAddress::from_sort_key(st->column_text(0));
    if (!held) return tl::unexpected(StoreError::unavailable("database holds a malformed port address"));
    if (!visit(*held)) return {};
  }
}

StoreResult<std::optional<ipam::AddressHolder>> SqlitePortAddressBook::holder(const IpAddress& address) {
  HSNS_STORE_ASSIGN(st, sql::prepare(c_, "SELECT id, name FROM ports WHERE subnet_id = ?1 AND ip_key = ?2"));
  st->bind_text(1, port_.subnet_id).bind_text(2, address.sort_key());
  HSNS_STORE_ASSIGN(row, sql::step(*st));
  if (!*row) return std::optional<ipam::AddressHolder>();
  return std::optional<ipam::AddressHolder>(ipam::AddressHolder{st->column_text(0), st->column_text(1)});
}

StoreResult<bool> SqlitePortAddressBook::claim(const IpAddress& address) {
  HSNS_STORE_ASSIGN(st, sql::prepare(c_,
                                     "INSERT INTO ports (id, name, subnet_id, tenant, host, npu, ip, ip_key, "
                                     "fixed_ip, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
                                     "ON CONFLICT (subnet_id, ip_key) DO NOTHING"));
  st->bind_text(1, port_.id)
      .bind_text(2, port_.name)
      .bind_text(3, port_.subnet_id)
      .bind_text(4, port_.tenant)
      .bind_text(5, port_.host)
      .bind_int64(6, port_.npu)
      .bind_text(7, address.to_string())
      .bind_text(8, address.sort_key())
      .bind_int64(9, port_.fixed_ip ? 1 : 0)
      .bind_text(10, port_.created_at);
  HSNS_STORE_TRY(sql::run(*st));
  if (st->changes() == 0) return false;
  port_.ip_address = address;
  return true;
}

}  // namespace hsns::store
