# SPDX-License-Identifier: Apache-2.0
"""The machine's description for bench/results/ (one copy for every bench script)."""


def cpu_model():
    """The first 'model name' of /proc/cpuinfo, or 'unknown'."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def memory_gib():
    """MemTotal of /proc/meminfo in GiB (float)."""
    with open("/proc/meminfo") as f:
        return int(f.readline().split()[1]) / 1024 / 1024
