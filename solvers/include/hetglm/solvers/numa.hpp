// SPDX-License-Identifier: Apache-2.0
// NUMA topology, thread pinning and node-local memory for the parallel CPU solver, via hwloc
// (Broquedis et al., "hwloc: a Generic Framework for Managing Hardware Affinities in HPC Applications", PDP 2010).
// SySCD (Ioannou, Mendler-Duenner, Parnell, NeurIPS 2019; docs/parallel-cpu.md) keeps each NUMA node's buckets,
// alpha slice and replicas of v in that node's memory and pins the node's threads. On a machine with one node
// (this one) every call here is a cheap no-op, and `--numa-nodes K` runs the same code path with K virtual nodes.
// All functions are thread-safe (the hwloc topology is loaded once and then only read).
#pragma once
#include <cstddef>

namespace hetglm::numa {

/// Number of NUMA nodes hwloc reports (>= 1; 1 when hwloc cannot load the topology).
int node_count();

/// Number of processing units (hardware threads) of NUMA node `node` (0-based; all PUs when there is one node).
int node_pu_count(int node);

/// Binds the calling thread to the CPUs of NUMA node `node` while alive, and restores the previous binding on
/// destruction. A no-op (bound() == false) when the machine has one node, `node` is out of range, or the OS refuses.
class ScopedThreadBind {
 public:
  explicit ScopedThreadBind(int node);
  ~ScopedThreadBind();
  ScopedThreadBind(const ScopedThreadBind&) = delete;
  ScopedThreadBind& operator=(const ScopedThreadBind&) = delete;
  bool bound() const { return saved_ != nullptr; }

 private:
  void* saved_ = nullptr;  // hwloc_cpuset_t of the previous binding
};

/// An uninitialized array of `n` doubles placed on NUMA node `node`: hwloc_alloc_membind when the machine has
/// several nodes, plain allocation otherwise (then the first thread to write a page places it: first touch).
/// Throws std::bad_alloc when memory is exhausted.
class NodeBuffer {
 public:
  NodeBuffer() = default;
  NodeBuffer(std::size_t n, int node);
  ~NodeBuffer();
  NodeBuffer(NodeBuffer&& o) noexcept;
  NodeBuffer& operator=(NodeBuffer&& o) noexcept;
  NodeBuffer(const NodeBuffer&) = delete;
  NodeBuffer& operator=(const NodeBuffer&) = delete;
  double* data() const { return data_; }
  std::size_t size() const { return n_; }

 private:
  void release();
  double* data_ = nullptr;
  std::size_t n_ = 0;
  bool hwloc_ = false;  // allocated by hwloc_alloc_membind (freed by hwloc_free)
};

/// Best effort: migrates the pages fully inside [p, p + bytes) to NUMA node `node` (hwloc_set_area_membind with
/// HWLOC_MEMBIND_MIGRATE). Returns false (and changes nothing) on a one-node machine or when the OS refuses.
bool migrate_to_node(const void* p, std::size_t bytes, int node);

}  // namespace hetglm::numa
