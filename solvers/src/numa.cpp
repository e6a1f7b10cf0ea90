// SPDX-License-Identifier: Apache-2.0
// hwloc-backed NUMA helpers (numa.hpp).
#include "hetglm/solvers/numa.hpp"

#include <hwloc.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <new>
#include <utility>

namespace hetglm::numa {

namespace {

struct Topology {
  hwloc_topology_t topo = nullptr;
  int nodes = 1;
  Topology() {
    if (hwloc_topology_init(&topo) != 0) {
      topo = nullptr;
      return;
    }
    if (hwloc_topology_load(topo) != 0) {
      hwloc_topology_destroy(topo);
      topo = nullptr;
      return;
    }
    const int k = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    nodes = k > 0 ? k : 1;
  }
  ~Topology() {
    if (topo) hwloc_topology_destroy(topo);
  }
  hwloc_obj_t node(int k) const {
    return topo ? hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(k)) : nullptr;
  }
};

const Topology& topology() {
  static const Topology t;  // C++11 magic static: loaded once, thread-safe
  return t;
}

}  // namespace

int node_count() { return topology().nodes; }

int node_pu_count(int node) {
  const Topology& t = topology();
  if (!t.topo) return 1;
  hwloc_obj_t obj = t.nodes > 1 ? t.node(node) : hwloc_get_root_obj(t.topo);
  if (!obj || !obj->cpuset) return 1;
  const int w = hwloc_bitmap_weight(obj->cpuset);
  return w > 0 ? w : 1;
}

ScopedThreadBind::ScopedThreadBind(int node) {
  const Topology& t = topology();
  if (t.nodes <= 1 || node < 0 || node >= t.nodes) return;
  hwloc_obj_t obj = t.node(node);
  if (!obj || !obj->cpuset) return;
  hwloc_cpuset_t saved = hwloc_bitmap_alloc();
  if (hwloc_get_cpubind(t.topo, saved, HWLOC_CPUBIND_THREAD) != 0 ||
      hwloc_set_cpubind(t.topo, obj->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
    hwloc_bitmap_free(saved);
    return;
  }
  saved_ = saved;
}

ScopedThreadBind::~ScopedThreadBind() {
  if (!saved_) return;
  auto saved = static_cast<hwloc_cpuset_t>(saved_);
  hwloc_set_cpubind(topology().topo, saved, HWLOC_CPUBIND_THREAD);
  hwloc_bitmap_free(saved);
}

NodeBuffer::NodeBuffer(std::size_t n, int node) : n_(n) {
  if (n == 0) return;
  const Topology& t = topology();
  if (t.nodes > 1 && node >= 0 && node < t.nodes) {
    if (hwloc_obj_t obj = t.node(node); obj && obj->nodeset) {
      void* p = hwloc_alloc_membind(t.topo, n * sizeof(double), obj->nodeset, HWLOC_MEMBIND_BIND,
                                    HWLOC_MEMBIND_BYNODESET);
      if (p) {
        data_ = static_cast<double*>(p);
        hwloc_ = true;
        return;
      }
    }
  }
  data_ = new double[n];  // uninitialized: the first thread to write a page places it (first touch)
}

void NodeBuffer::release() {
  if (!data_) return;
  if (hwloc_) hwloc_free(topology().topo, data_, n_ * sizeof(double));
  else delete[] data_;
  data_ = nullptr;
  n_ = 0;
  hwloc_ = false;
}

NodeBuffer::~NodeBuffer() { release(); }

NodeBuffer::NodeBuffer(NodeBuffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), n_(std::exchange(o.n_, 0)), hwloc_(std::exchange(o.hwloc_, false)) {}

NodeBuffer& NodeBuffer::operator=(NodeBuffer&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    n_ = std::exchange(o.n_, 0);
    hwloc_ = std::exchange(o.hwloc_, false);
  }
  return *this;
}

bool migrate_to_node(const void* p, std::size_t bytes, int node) {
  const Topology& t = topology();
  if (t.nodes <= 1 || node < 0 || node >= t.nodes || !p || bytes == 0) return false;
  hwloc_obj_t obj = t.node(node);
  if (!obj || !obj->nodeset) return false;
  const long page_l = sysconf(_SC_PAGESIZE);
  const std::uintptr_t page = page_l > 0 ? static_cast<std::uintptr_t>(page_l) : 4096;
  const std::uintptr_t lo = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  const std::uintptr_t hi = (reinterpret_cast<std::uintptr_t>(p) + bytes) / page * page;
  if (hi <= lo) return false;
  return hwloc_set_area_membind(t.topo, reinterpret_cast<const void*>(lo), hi - lo, obj->nodeset, HWLOC_MEMBIND_BIND,
                                HWLOC_MEMBIND_MIGRATE | HWLOC_MEMBIND_BYNODESET) == 0;
}

}  // namespace hetglm::numa
