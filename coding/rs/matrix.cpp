#include "coding/rs/matrix.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "coding/gf256.hpp"
#include "coding/region.hpp"

namespace ncast::rs {

Matrix::Matrix(std::size_t rows, std::size_t cols, std::span<const std::uint8_t> bytes)
    : rows_(rows), cols_(cols), a_(bytes.begin(), bytes.end()) {
  if (bytes.size() != rows * cols)
    throw std::invalid_argument("matrix: " + std::to_string(bytes.size()) + " bytes given for " + std::to_string(rows) +
                                " x " + std::to_string(cols));
}

Matrix Matrix::identity(std::size_t n) {
  Matrix id(n, n);
  for (std::size_t i = 0; i < n; ++i) id(i, i) = 1;
  return id;
}

Matrix operator*(const Matrix& a, const Matrix& b) {
  if (a.cols() != b.rows())
    throw std::invalid_argument("matrix product: " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                " times " + std::to_string(b.rows()) + " x " + std::to_string(b.cols()));
  const auto& kern = gf::kernels();
  Matrix p(a.rows(), b.cols());
  // Row r of the product is Σ_j a(r, j) · row j of b: one region multiply-add per term.
  for (std::size_t r = 0; r < a.rows(); ++r)
    for (std::size_t j = 0; j < a.cols(); ++j)
      if (const std::uint8_t c = a(r, j); c != 0) kern.mul_add(p.row(r), b.row(j), c, b.cols());
  return p;
}

std::optional<Matrix> invert(const Matrix& a) {
  if (a.rows() != a.cols())
    throw std::invalid_argument("matrix inverse: " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                " is not square");
  const std::size_t n = a.rows();
  const auto& kern = gf::kernels();
  // Eliminate on [a | I]; when the left half has become I the right half is the inverse.
  Matrix w(n, 2 * n);
  for (std::size_t r = 0; r < n; ++r) {
    std::copy_n(a.row(r), n, w.row(r));
    w(r, n + r) = 1;
  }
  for (std::size_t p = 0; p < n; ++p) {
    std::size_t pivot = p;
    while (pivot < n && w(pivot, p) == 0) ++pivot;
    if (pivot == n) return std::nullopt;
    if (pivot != p)
      for (std::size_t c = 0; c < 2 * n; ++c) std::swap(w(p, c), w(pivot, c));
    // Columns left of p are already zero in the pivot row, so the row operations start at p.
    const std::size_t width = 2 * n - p;
    if (const std::uint8_t s = w(p, p); s != 1) kern.mul(w.row(p) + p, w.row(p) + p, gf::inv(s), width);
    for (std::size_t r = 0; r < n; ++r)
      if (const std::uint8_t f = w(r, p); r != p && f != 0) kern.mul_add(w.row(r) + p, w.row(p) + p, f, width);
  }
  Matrix inv(n, n);
  for (std::size_t r = 0; r < n; ++r) std::copy_n(w.row(r) + n, n, inv.row(r));
  return inv;
}

Matrix select_rows(const Matrix& a, std::span<const std::size_t> rows) {
  Matrix s(rows.size(), a.cols());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] >= a.rows())
      throw std::out_of_range("matrix: row " + std::to_string(rows[i]) + " of a " + std::to_string(a.rows()) +
                              "-row matrix");
    std::copy_n(a.row(rows[i]), a.cols(), s.row(i));
  }
  return s;
}

}  // namespace ncast::rs
