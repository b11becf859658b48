#include "table.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace hsnsctl {

namespace {

constexpr const char* kColumnGap = "   ";
const std::string kEmptyCell = "-";

const std::string& shown(const std::string& cell) {
  return cell.empty() ? kEmptyCell : cell;
}

}  // namespace

std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

Table::Table(std::vector<std::string> header) : header_(std::move(header)) {
  if (header_.empty()) throw std::invalid_argument("a table needs at least one column");
}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() > header_.size()) {
    throw std::invalid_argument("table row has " + std::to_string(cells.size()) + " cells for " +
                                std::to_string(header_.size()) + " columns");
  }
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

void Table::render(std::ostream& out) const {
  std::vector<std::size_t> widths(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) widths[c] = display_width(shown(header_[c]));
  for (const auto& row : rows_) {
    for (std::size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], display_width(shown(row[c])));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string& cell = shown(cells[c]);
      text += cell;
      if (c + 1 < cells.size()) text.append(widths[c] - display_width(cell), ' ').append(kColumnGap);
    }
    out << text << '\n';
  };
  line(header_);
  for (const auto& row : rows_) line(row);
}

std::string Table::to_string() const {
  std::ostringstream out;
  render(out);
  return out.str();
}

}  // namespace hsnsctl
