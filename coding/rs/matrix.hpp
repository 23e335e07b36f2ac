#pragma once
// Dense matrices over GF(2^8): the small algebra (products, inverses) behind generator and decode
// matrices. Bulk data never goes through here; it goes through the Engine.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace ncast::rs {

// Row-major; element (r, c) is bytes()[r·cols() + c].
class Matrix {
 public:
  Matrix() = default;
  Matrix(std::size_t rows, std::size_t cols) : rows_(rows), cols_(cols), a_(rows * cols) {}
  // rows × cols from row-major bytes; throws std::invalid_argument when the sizes disagree.
  Matrix(std::size_t rows, std::size_t cols, std::span<const std::uint8_t> bytes);
  static Matrix identity(std::size_t n);

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  std::uint8_t& operator()(std::size_t r, std::size_t c) { return a_[r * cols_ + c]; }
  std::uint8_t operator()(std::size_t r, std::size_t c) const { return a_[r * cols_ + c]; }
  std::uint8_t* row(std::size_t r) { return a_.data() + r * cols_; }
  const std::uint8_t* row(std::size_t r) const { return a_.data() + r * cols_; }
  std::span<const std::uint8_t> bytes() const { return a_; }

  bool operator==(const Matrix&) const = default;

 private:
  std::size_t rows_ = 0, cols_ = 0;
  std::vector<std::uint8_t> a_;
};

// a · b; throws std::invalid_argument when a.cols() != b.rows().
Matrix operator*(const Matrix& a, const Matrix& b);

// The inverse of a square matrix, or nullopt when it is singular (Gauss–Jordan elimination whose
// row operations run on the region kernels, so even 255 × 255 takes well under a millisecond).
// Throws std::invalid_argument when a is not square.
std::optional<Matrix> invert(const Matrix& a);

// The rows of a listed in order; throws std::out_of_range for an index past the last row.
Matrix select_rows(const Matrix& a, std::span<const std::size_t> rows);

}  // namespace ncast::rs
