#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Epoch time against the memory-bandwidth bound: how close an epoch runs to the bytes it must read.

Usage: python3 bench/bandwidth.py [--build-dir build-bench] [--out bench/results]  -> OUT/bandwidth.{md,json}

1. Bandwidth, measured once: `hetglm-bandwidth` (STREAM-like memcpy and read-only sum over 512 MiB arrays, 1
   thread and all cores, best of 10, GB/s = 10^9 B/s).
2. Epochs: `hetglm train` at an unreachable tolerance for EPOCHS epochs (report JSON; the history holds the
   certified epochs with their epoch number and seconds since the solve started: the certificate schedule
   certifies every k-th epoch, so an epoch's time is a record's time since the previous one over the epochs
   between them, median over the records, the first epoch excluded), for each solver configuration the CLI offers
   (the default `--solver auto --formulation auto`, sequential, syscd at 1 and all threads), median over REPS runs.
   The default runs the Newton solver for logistic regression: its "epoch" is one Newton iteration (about three
   passes, bench/results/bandwidth_newton.md), so the bytes of step 3 do not describe that row.
3. Bytes an epoch must move (dual/SDCA, CSR rows of X; n samples, d features, nnz nonzeros), counted once each:
     coordinate pass: X indices + values 8 nnz, offsets 8 (n + 1), permutation 4 n, alpha read+write 16 n,
                      y, c, ||x_i||^2 24 n, v: 16 d when v fits in the last-level cache, else 16 nnz (gather +
                      scatter of 8-byte entries)
     gap pass (v = A alpha and the certificate): X and offsets again (8 nnz + 8 (n + 1)), alpha, y, c 24 n, v as
                      above; counted every epoch, although the certificate schedule runs it every k-th only (the
                      bound is then loose by up to a pass)
   bound = bytes / read bandwidth at the same thread count (the read-only kernel: an epoch mostly reads).
   ratio = measured epoch time / bound (1.0 = running at the memory-bandwidth limit). Goal (issue 3): <= 1.5 on
   dense data.
4. --newton: the primal Newton solver (L2 logistic, --solver newton, all cores) on dense sets instead, written to
   OUT/bandwidth_newton.{md,json}. Its history counts the passes over the data (`passes`: the derivative pass, one
   per conjugate-gradient product, v = X w), so an epoch is one pass: (seconds of the last record - first) /
   (passes of the last - first), which charges the line search and the per-sample derivatives to the passes as
   well. Bytes a pass must move: the float32 values of X, 4 n d (dense rows: neither indices nor offsets are
   read); the n-vectors a pass also touches (32 n to 48 n bytes) are left out, so the bound is the strict one.
   The read bandwidth is measured again right before every run (hetglm-bandwidth, 256 MiB, best of 3, at the
   run's thread count) and each run's pass time is set against that bound: ratio = the median over the runs.
   Each run: `--tol 1e-6 --max-epochs 8` (NEWTON_TOL), the float32 values alone, as every fit at a tol of 1e-6 or
   more reads them. Below 1e-6 the command line keeps the values' float64 remainders (values_lo,
   docs/conventions.md, "Precision"), and the passes that decide v and the certificate read 8 bytes an entry instead
   of 4: the runs before 2026-12-05 17:30 UTC used --tol 1e-15 and so set those passes against half their bytes.
   A run that reports float64_values is an error.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_peers as cp  # noqa: E402  (build, data generation, machine description)

EPOCHS = 12
REPS = 5
LLC_BYTES = None


def llc_bytes():
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    for idx in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        try:
            size = open(os.path.join(base, idx, "size")).read().strip()
            v = int(size[:-1]) * (1024 if size.endswith("K") else 1024 * 1024) if size[-1] in "KM" else int(size)
            best = max(best, v)
        except (OSError, ValueError):
            pass
    return best or 8 << 20


def epoch_bytes(n, d, nnz):
    v = 16 * d if 8 * d <= llc_bytes() // 2 else 16 * nnz
    coord = 8 * nnz + 8 * (n + 1) + 4 * n + 16 * n + 24 * n + v
    gap = 8 * nnz + 8 * (n + 1) + 24 * n + v
    return coord + gap, coord


def nnz_of(path):
    n = nnz = 0
    d = 0
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            n += 1
            nnz += len(parts) - 1
            if len(parts) > 1:
                d = max(d, int(parts[-1].split(":")[0]))
    return n, d, nnz


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(cp.ROOT, "build-bench"))
    ap.add_argument("--out", default=os.path.join(cp.ROOT, "bench", "results"))
    ap.add_argument("--reps", type=int, default=REPS)
    ap.add_argument("--newton", action="store_true", help="the Newton solver's pass on dense sets (step 4)")
    ap.add_argument("--no-build", action="store_true", help="use --build-dir as it is (no reconfigure or build)")
    a = ap.parse_args()
    cp.ensure_python_deps()
    if not a.no_build:
        cp.ensure_build(a.build_dir)
    hetglm = os.path.join(a.build_dir, "bin", "hetglm")
    cores = os.cpu_count() or 1
    bw = json.loads(subprocess.run([os.path.join(a.build_dir, "bin", "hetglm-bandwidth")], check=True,
                                   capture_output=True, text=True).stdout)
    print("bandwidth:", bw, file=sys.stderr)
    if a.newton:
        return newton_main(a, hetglm, cores, bw)
    dense = cp.generated(a.build_dir, "dense_100000x200", {"kind": "dense", "rows": 100000, "cols": 200})
    sparse = cp.generated(a.build_dir, "sparse_100000x50000", {"kind": "sparse", "rows": 100000, "cols": 50000,
                                                               "nnz": 80})
    D = os.path.join(cp.ROOT, "data")
    sets = [("dense_100000x200", dense[0], "logistic"), ("sparse_100000x50000", sparse[0], "logistic"),
            ("a9a", D + "/a9a", "logistic"), ("w7a", D + "/w7a", "logistic")]
    cfgs = cp.hetglm_configs(hetglm, cores)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, model in sets:
            n, d, nnz = nnz_of(path)
            total, coord = epoch_bytes(n, d, nnz)
            for label, extra, threads in cfgs:
                ep = []
                for _ in range(a.reps):
                    rep = os.path.join(tmp, "r.json")
                    subprocess.run([hetglm, "train", "-q", "--model", model, "--tol", "1e-15", "--max-epochs",
                                    str(EPOCHS), "--report-json", rep, *extra, path, os.path.join(tmp, "m")],
                                   check=True, capture_output=True)
                    # The history holds the certified epochs only (the certificate schedule certifies every k-th):
                    # an epoch's time is a record's time since the previous one over the epochs between them.
                    h = json.load(open(rep))["columns"][0]["history"]
                    ep.append(statistics.median([(h[i + 1]["seconds"] - h[i]["seconds"]) /
                                                 (h[i + 1]["epoch"] - h[i]["epoch"]) for i in range(len(h) - 1)]))
                t = statistics.median(ep)
                gbs = bw["read_gbs_1"] if threads == 1 else bw["read_gbs"]
                bound = total / (gbs * 1e9)
                rows.append({"data": name, "model": model, "n": n, "d": d, "nnz": nnz, "system": label,
                             "threads": threads, "epoch_s": t, "bytes": total, "bytes_coordinate_pass": coord,
                             "read_gbs": gbs, "bound_s": bound, "ratio": t / bound,
                             "achieved_gbs": total / t / 1e9})
                print(rows[-1], file=sys.stderr)
    res = {"machine": cp.machine(hetglm), "bandwidth": bw, "llc_bytes": llc_bytes(), "epochs": EPOCHS,
           "reps": a.reps, "method": __doc__.strip(), "rows": rows}
    # throughput scaling on the dense set
    dense_rows = {r["system"]: r for r in rows if r["data"] == "dense_100000x200"}
    one = [r for s, r in dense_rows.items() if "syscd 1t" in s]
    many = [r for s, r in dense_rows.items() if "syscd" in s and r["threads"] == 2]
    res["dense_syscd_2t_over_1t"] = one[0]["epoch_s"] / many[0]["epoch_s"] if one and many else None
    os.makedirs(a.out, exist_ok=True)
    json.dump(res, open(os.path.join(a.out, "bandwidth.json"), "w"), indent=1)
    m = res["machine"]
    L = ["# Epoch time against the memory-bandwidth bound", "",
         f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; {m['os']}; {m['hetglm']}. "
         f"Last-level cache {res['llc_bytes'] >> 20} MiB. Command: `python3 bench/bandwidth.py`. {m['load_note']}.", "",
         f"Bandwidth (hetglm-bandwidth, {bw['array_mib']} MiB arrays, best of {bw['reps']}): copy "
         f"{bw['copy_gbs_1']:.1f} GB/s on 1 thread, {bw['copy_gbs']:.1f} GB/s on {bw['threads']}; read-only "
         f"{bw['read_gbs_1']:.1f} GB/s on 1 thread, {bw['read_gbs']:.1f} GB/s on {bw['threads']}.", "",
         f"| data | n | d | nnz | solver | threads | epoch ms (median) | MB per epoch | bound ms | ratio | achieved GB/s |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append(f"| {r['data']} | {r['n']} | {r['d']} | {r['nnz']} | {r['system']} | {r['threads']} | "
                 f"{1e3 * r['epoch_s']:.2f} | {r['bytes'] / 1e6:.1f} | {1e3 * r['bound_s']:.2f} | {r['ratio']:.2f} | "
                 f"{r['achieved_gbs']:.2f} |")
    L.append("")
    if res["dense_syscd_2t_over_1t"] is not None:
        L.append(f"SySCD epoch throughput on dense_100000x200, 2 threads over 1 thread: "
                 f"{res['dense_syscd_2t_over_1t']:.2f}x (goal >= 1.8x).")
    else:
        L.append("SySCD is not in this build's CLI (no `--solver`): no thread scaling measured.")
    L += ["", "Method: " + " ".join(l.strip() for l in __doc__.strip().split("\n")[2:])]
    open(os.path.join(a.out, "bandwidth.md"), "w").write("\n".join(L) + "\n")
    print("\n".join(L))


NEWTON_SETS = (("dense_100000x200", 100000, 200), ("dense_50000x500", 50000, 500), ("dense_400000x100", 400000, 100))
NEWTON_ITERS = 8
NEWTON_TOL = "1e-6"


def newton_main(a, hetglm, cores, bw):
    rows = []
    bw_bin = os.path.join(a.build_dir, "bin", "hetglm-bandwidth")
    with tempfile.TemporaryDirectory() as tmp:
        for name, n_rows, n_cols in NEWTON_SETS:
            path = cp.generated(a.build_dir, name, {"kind": "dense", "rows": n_rows, "cols": n_cols})[0]
            n, d, nnz = nnz_of(path)
            for threads in sorted({1, cores}):
                per_pass, passes_per_iter = [], []
                gbs_runs = []
                for _ in range(a.reps):
                    # The read bandwidth measured right before each run, at the run's thread count: on a shared VM
                    # it moved by 25% within an hour, so each pass time is set against the bound of its moment.
                    now = json.loads(subprocess.run([bw_bin, "--mib", "256", "--reps", "3", "--threads",
                                                     str(threads)], check=True, capture_output=True,
                                                    text=True).stdout)
                    gbs_runs.append(now["read_gbs_1"] if threads == 1 else now["read_gbs"])
                    rep = os.path.join(tmp, "r.json")
                    subprocess.run([hetglm, "train", "-q", "--model", "logistic", "--solver", "newton", "--tol",
                                    NEWTON_TOL, "--max-epochs", str(NEWTON_ITERS), "--threads", str(threads),
                                    "--report-json", rep, path, os.path.join(tmp, "m")], check=True,
                                   capture_output=True)
                    report = json.load(open(rep))
                    if report.get("float64_values"):
                        sys.exit(f"{name}: the run read the float64 values (values_lo): not the float32 pass")
                    h = report["columns"][0]["history"]
                    per_pass.append((h[-1]["seconds"] - h[0]["seconds"]) / (h[-1]["passes"] - h[0]["passes"]))
                    passes_per_iter.append((h[-1]["passes"] - h[0]["passes"]) / (len(h) - 1))
                t = statistics.median(per_pass)
                total = 4 * nnz
                ratios = [pp / (total / (g * 1e9)) for pp, g in zip(per_pass, gbs_runs)]
                gbs = statistics.median(gbs_runs)
                rows.append({"data": name, "n": n, "d": d, "nnz": nnz, "threads": threads, "pass_s": t,
                             "passes_per_iteration": statistics.median(passes_per_iter), "bytes": total,
                             "read_gbs": gbs, "bound_s": total / (gbs * 1e9), "ratio": statistics.median(ratios),
                             "ratio_once": t / (total / ((bw["read_gbs_1"] if threads == 1 else bw["read_gbs"]) * 1e9)),
                             "achieved_gbs": total / t / 1e9, "per_pass_s_all": per_pass, "read_gbs_all": gbs_runs,
                             "ratio_all": ratios})
                print(rows[-1], file=sys.stderr)
    res = {"machine": cp.machine(hetglm), "bandwidth": bw, "iterations": NEWTON_ITERS, "reps": a.reps,
           "load_after": os.getloadavg(), "method": __doc__.strip(), "rows": rows}
    os.makedirs(a.out, exist_ok=True)
    json.dump(res, open(os.path.join(a.out, "bandwidth_newton.json"), "w"), indent=1)
    m = res["machine"]
    L = ["# The Newton solver's dense epoch (one pass over X) against the memory-bandwidth bound", "",
         f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; {m['os']}; {m['hetglm']}. "
         f"Command: `python3 bench/bandwidth.py --newton{' --no-build' if a.no_build else ''} --reps {a.reps}`. "
         f"{m['load_note']}; load average after the run {res['load_after'][0]:.2f}.", "",
         f"Bandwidth (hetglm-bandwidth, {bw['array_mib']} MiB arrays, best of {bw['reps']}, once at the start): "
         f"read-only {bw['read_gbs_1']:.1f} GB/s on 1 thread, {bw['read_gbs']:.1f} GB/s on {bw['threads']}; and "
         "before every run (256 MiB, best of 3, at the run's thread count): the read GB/s column, median.", "",
         "L2 logistic, C = 1, `--solver newton --tol " + NEWTON_TOL + "` (the float32 values), at most "
         + str(NEWTON_ITERS) + " Newton iterations per run, median over "
         + str(a.reps) + " runs. ratio: the median over the runs of pass time / bound at that run's bandwidth; "
         "ratio (start): the median pass time against the bound measured once at the start.", "",
         "| data | n | d | threads | passes per Newton iteration | pass ms (median) | MB per pass | read GB/s | "
         "bound ms | ratio | ratio (start) | achieved GB/s |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append(f"| {r['data']} | {r['n']} | {r['d']} | {r['threads']} | {r['passes_per_iteration']:.1f} | "
                 f"{1e3 * r['pass_s']:.2f} | {r['bytes'] / 1e6:.1f} | {r['read_gbs']:.1f} | {1e3 * r['bound_s']:.2f} | "
                 f"{r['ratio']:.2f} | {r['ratio_once']:.2f} | {r['achieved_gbs']:.2f} |")
    L += ["", "Method (step 4): " + " ".join(l.strip() for l in __doc__.strip().split("4. --newton:")[1].split("\n"))]
    open(os.path.join(a.out, "bandwidth_newton.md"), "w").write("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main()
