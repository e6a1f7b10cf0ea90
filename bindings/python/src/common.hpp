// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the extension's translation units.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <initializer_list>
#include <vector>

namespace hetglm::py {

/// A numpy array that takes over a std::vector's buffer (moved, never copied).
template <class T, class A>
nanobind::ndarray<nanobind::numpy, T> to_numpy(std::vector<T, A>&& v, std::initializer_list<std::size_t> shape) {
  auto* heap = new std::vector<T, A>(std::move(v));
  nanobind::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T, A>*>(p); });
  return nanobind::ndarray<nanobind::numpy, T>(heap->data(), shape, owner);
}

template <class T, class A>
nanobind::ndarray<nanobind::numpy, T> to_numpy(std::vector<T, A>&& v) {
  const std::size_t n = v.size();
  return to_numpy(std::move(v), {n});
}

}  // namespace hetglm::py
