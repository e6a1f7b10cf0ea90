// SPDX-License-Identifier: Apache-2.0
// Options for creating an accelerator backend (backends/include/hetglm/backends/registry.hpp creates them; every
// backend reads the fields that concern it) and the accelerator memory budget syntax of --accel-memory
// (docs/conventions.md, "--accel-memory").
#pragma once
#include <cstddef>
#include <string>

namespace hetglm {

/// An accelerator memory budget as the user gave it: a byte count, or a percentage of the bytes that every
/// coordinate of the problem takes in the device format (known only once the data is loaded).
struct MemoryBudget {
  double bytes = 0;    ///< > 0: bytes
  double percent = 0;  ///< > 0: percent of the data, in (0, 100]
  std::string text;    ///< as the user gave it (parse_memory_budget), for messages; may be empty
  bool empty() const { return !(bytes > 0) && !(percent > 0); }
  /// The budget in bytes for data of `total_bytes` (0 when empty: the device's own limit).
  std::size_t resolve(std::size_t total_bytes) const;
};

/// Parse --accel-memory: a byte count as --memory-limit reads it (memory.hpp parse_byte_size: optional decimal suffix
/// K M G T or binary Ki Mi Gi Ti, a whole count read exactly), or a percentage ("25%"). Throws InvalidArgument
/// "--accel-memory: cannot parse 'X' (expected bytes with an optional K M G T Ki Mi Gi Ti suffix, or a percentage such
/// as 25%)", "--accel-memory: must be positive, got 'X' (...)", "--accel-memory: a percentage must be at most 100%,
/// got 'X'", or parse_byte_size's "too large" / "must be whole".
MemoryBudget parse_memory_budget(const std::string& text);
/// parse_memory_budget(text).resolve(total_bytes).
std::size_t parse_memory_size(const std::string& text, std::size_t total_bytes);

/// Throws InvalidArgument unless `gbps` (--link-bandwidth) is 0 (no emulated link) or within [0.001, 1e6] GB/s: a
/// slower link slept for hours per round without seeing Ctrl-C (1e-9 GB/s), and a far smaller one overflowed the
/// sleep to nothing, silently emulating no link (1e-300).
void check_link_bandwidth(double gbps);

struct BackendOptions {
  /// Bytes for resident coordinates (column_bytes each). 0 = the device's own limit (cpu: unlimited;
  /// opencl: 3/4 of CL_DEVICE_GLOBAL_MEM_SIZE and at most CL_DEVICE_MAX_MEM_ALLOC_SIZE of nonzeros; cuda: 80% of the
  /// free memory).
  std::size_t memory_budget = 0;
  /// cpu stand-in only: emulated host<->device link in GB/s (10^9 bytes/s); 0 = no link cost. Every copy
  /// (columns, alpha, v, both directions) is charged bytes / bandwidth of wall time by sleeping.
  double link_bandwidth_gbps = 0;
  /// cpu stand-in only: "double" (default) or "float" storage and arithmetic.
  std::string cpu_precision = "double";
  /// opencl: platform and device index (-1 = the first device; auto uses the first non-CPU device).
  int opencl_platform = -1;
  int opencl_device = -1;
  /// opencl: extra clBuildProgram options (appended; the environment variable HETGLM_OPENCL_OPTIONS is
  /// appended too). Used by tests to provoke a build failure.
  std::string opencl_build_options;
  /// fpga: the xclbin to program the card with (`--xclbin FILE`; the kernel built from hls/, docs/fpga.md).
  std::string xclbin;
  /// cuda: the device ordinal.
  int cuda_device = 0;
  /// cuda: run the TPA-SCD block code as one block over the epoch's order (the exact sequential epoch, for the
  /// conformance tests) instead of one block per coordinate (docs/cuda.md).
  bool cuda_sequential = false;
  /// The TPA-SCD wave schedule (hetglm/tpa_schedule.hpp, docs/cuda.md "The wave schedule").
  /// cuda: the most coordinates in flight (0 = the device's resident blocks). cpu stand-in: 0 = the sequential
  /// epoch; N > 0 = the host emulation of the CUDA kernel's schedule with N coordinates in flight (the same waves,
  /// the same stale reads of v, the same sigma').
  long tpa_concurrency = 0;
  /// false: one wave of the whole concurrency at sigma' 1 (the unsafe schedule; tests show its stall).
  bool tpa_safeguard = true;
};

}  // namespace hetglm
