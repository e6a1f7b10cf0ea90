#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Collects what bench/device/run.sh left in RAW (steps.tsv, machine.txt, the test logs, the CLI reports, the
hetglm-gpu-bench and Snap ML JSONs) into DEST/results.json and DEST/results.md (DEST defaults to RAW). Standard
library only.   python3 bench/device/report.py RAW [DEST]"""
import json
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(x, spec=".3g"):
    return "-" if x is None else format(x, spec) if isinstance(x, (int, float)) else str(x)


def main(out, dest):
    res = {"steps": [], "tests": {}, "cli": {}, "bench": {}, "snapml": None}
    res["machine"] = open(os.path.join(out, "machine.txt")).read() if os.path.exists(os.path.join(out, "machine.txt")) else ""
    if os.path.exists(os.path.join(out, "steps.tsv")):
        for line in open(os.path.join(out, "steps.tsv")):
            name, status, secs = line.rstrip("\n").split("\t")
            res["steps"].append({"step": name, "status": status, "seconds": int(secs)})
    for name in ("test_cuda", "test_cuda_cases", "test_tpa"):
        p = os.path.join(out, name + ".log")
        if not os.path.exists(p):
            continue
        text = open(p, errors="replace").read()
        m = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", text)
        skipped = len(re.findall(r"\*\*\*Skipped|Skipped ", text))
        res["tests"][name] = {"summary": m.group(0) if m else "no summary (see log)", "skipped": skipped,
                              "failed": re.findall(r"^\s+\d+ - (\S+) \(Failed\)", text, re.M)}
    for f in sorted(os.listdir(out)):
        if f.startswith("cli_") and f.endswith(".json"):
            r = load(os.path.join(out, f))
            if r:
                res["cli"][f[:-5]] = {k: r.get(k) for k in ("accelerator", "accel_memory", "converged", "rel_gap", "primal",
                                                            "epochs", "load_seconds", "train_seconds", "n_samples",
                                                            "nnz", "test")}
        if f.startswith("bench_") and f.endswith(".json"):
            res["bench"][f[6:-5]] = load(os.path.join(out, f))
    res["snapml"] = load(os.path.join(out, "snapml_big.json"))
    json.dump(res, open(os.path.join(dest, "results.json"), "w"), indent=2)

    md = ["# bench/device/run.sh results", "", "```", res["machine"].strip(), "```", "", "## Steps", "",
          "| step | status | seconds |", "|---|---|---|"]
    md += [f"| {s['step']} | {s['status']} | {s['seconds']} |" for s in res["steps"]]
    md += ["", "## Tests", "", "| ctest | result | skipped | failed |", "|---|---|---|---|"]
    md += [f"| {k} | {v['summary']} | {v['skipped']} | {' '.join(v['failed']) or '-'} |" for k, v in res["tests"].items()]
    md += ["", "## hetglm train (CLI, end to end)", "",
           "| run | accelerator | converged | rel gap | epochs | load s | train s | test |", "|---|---|---|---|---|---|---|---|"]
    for k, v in res["cli"].items():
        test = v.get("test") or {}
        t = ", ".join(f"{a} {fmt(b)}" for a, b in test.items() if isinstance(b, (int, float)))
        md.append(f"| {k} | {v.get('accelerator') or '-'} | {v.get('converged')} | {fmt(v.get('rel_gap'))} | "
                  f"{v.get('epochs')} | {fmt(v.get('load_seconds'))} | {fmt(v.get('train_seconds'))} | {t or '-'} |")
    for k, b in res["bench"].items():
        if not b:
            continue
        md += ["", f"## hetglm-gpu-bench: {b.get('data')} ({b.get('rows')} x {b.get('cols')}, {b.get('nnz')} nonzeros, "
               f"{fmt((b.get('device_bytes') or 0) / 1e9)} GB in the device format; {b.get('model')}, tol {b.get('tol')})", ""]
        if b.get("error"):
            md.append(f"error: {b['error']}")
        bw = b.get("bandwidth")
        if bw:
            md += [f"- epoch with all data resident: {fmt(bw.get('epoch_seconds', 0) * 1e3)} ms, "
                   f"{fmt(bw.get('epoch_data_gbps'))} GB/s of nonzeros (nnz x 8 bytes / epoch)"
                   + (f"; device-to-device copy {fmt(bw.get('copy_gbps'))} GB/s (read + write): "
                      f"{fmt(100 * bw.get('epoch_share_of_copy', 0), '.1f')}%" if "copy_gbps" in bw else ""),
                   f"- accelerator: {bw.get('accelerator')}", ""]
        md += ["| run | seconds | to tol s | converged | rel gap | rounds / epochs | swaps | accelerator |",
               "|---|---|---|---|---|---|---|---|"]
        for r in b.get("runs", []):
            if "error" in r:
                md.append(f"| {r['run']} | error: {r['error']} | | | | | | |")
                continue
            md.append(f"| {r['run']} | {fmt(r.get('seconds'))} | {fmt(r.get('seconds_to_tol'))} | {r.get('converged')} | "
                      f"{fmt(r['certificate']['rel_gap'])} | {r.get('rounds', r.get('epochs'))} | {r.get('swaps', '-')} | "
                      f"{r.get('accelerator', r.get('solver', '-'))} |")
        runs = {r["run"]: r for r in b.get("runs", []) if "error" not in r}
        def ratio(a, c):  # seconds to tol of run a over run c (both must reach tol)
            ta = runs.get(a, {}).get("seconds_to_tol")
            tc = runs.get(c, {}).get("seconds_to_tol")
            return ta / tc if ta and tc else None
        md += ["", f"- time to tol: CPU solver / DuHL 25% {fmt(ratio('cpu', 'duhl25'))}x; DuHL 25% / fully resident "
               f"{fmt(ratio('duhl25', 'full'))}x; streaming / DuHL 25% {fmt(ratio('stream25', 'duhl25'))}x; CPU solver / "
               f"fully resident {fmt(ratio('cpu', 'full'))}x ('-': a run did not reach tol within its limit)"]
    s = res["snapml"]
    if s:
        md += ["", f"## Snap ML {s.get('snapml_version', '')} on the generated set", ""]
        if s.get("error"):
            md.append(f"error: {s['error']}")
        md += ["| config | fit s | P(w) | vs hetglm's certified P |", "|---|---|---|---|"]
        for c in s.get("configs", []):
            md.append(f"| {c['config']} | {fmt(c.get('fit_seconds'))} | {fmt(c.get('primal'), '.10g')} | "
                      f"{fmt(c.get('rel_diff_to_hetglm'), '+.2e')} |" if "error" not in c else f"| {c['config']} | error: {c['error']} | | |")
    open(os.path.join(dest, "results.md"), "w").write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]))
