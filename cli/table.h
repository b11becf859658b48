// Plain-text tables for hsnsctl's default output: a header line and one line per row, columns
// left-aligned and separated by three spaces, no trailing blanks (so `awk '{print $1}'` works).
//
// Contract: a Table owns copies of its cells. Empty cells are rendered as "-" so every line has the
// same number of whitespace-separated fields as long as cells contain no blanks. Rows shorter than the
// header are padded with "-", longer rows are an error (std::invalid_argument from add_row). Widths are
// counted in UTF-8 code points. Values only; thread-compatible.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace hsnsctl {

class Table {
 public:
  explicit Table(std::vector<std::string> header);

  void add_row(std::vector<std::string> cells);

  const std::vector<std::string>& header() const { return header_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  bool empty() const { return rows_.empty(); }

  void render(std::ostream& out) const;
  std::string to_string() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Number of UTF-8 code points in text (continuation bytes are not counted).
std::size_t display_width(const std::string& text);

}  // namespace hsnsctl
