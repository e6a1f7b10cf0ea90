#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check that the FPGA kernel sources stay within the HLS subset (docs/design.md, "The HLS subset"; issue 7).

Kernel sources: hls/include/hetglm/hls/*.hpp, hls/src/*.cpp, the ABI header hls/include/hetglm/hls/kernel_abi.hpp
and the shared math core/include/hetglm/glm_math.h + glm_math_impl.h they include. Rules:
  - no heap: new, delete, malloc, calloc, realloc, free, aligned_alloc;
  - no STL containers or strings (std::vector, map, set, list, deque, string, unique_ptr, ...) and no includes of
    their headers;
  - no exceptions: throw, try, catch;
  - no recursion: a call graph over the functions defined in the kernel files (direct and mutual recursion);
  - every pragma through HETGLM_HLS: no `#pragma` other than `#pragma once`, and `_Pragma` only in portable.hpp.
Usage: check_hls_subset.py [--root DIR] [FILES...]   exit 0 = clean, 1 = violations (each printed as file:line);
       check_hls_subset.py --self-test              checks that each rule catches a bad snippet.
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KERNEL_GLOBS = [
    ("hls/include/hetglm/hls", (".hpp", ".h")),
    ("hls/src", (".cpp",)),
]
KERNEL_FILES = ["hls/include/hetglm/hls/kernel_abi.hpp", "core/include/hetglm/glm_math.h",
                "core/include/hetglm/glm_math_impl.h"]
PRAGMA_MACRO_FILE = "portable.hpp"

HEAP = re.compile(r"\b(new|delete|malloc|calloc|realloc|free|aligned_alloc)\b\s*[\(\[\w]")
HEAP_NEW = re.compile(r"\bnew\b|\bdelete\b")
STL = re.compile(r"\bstd\s*::\s*(vector|map|unordered_map|set|unordered_set|multimap|multiset|list|forward_list|deque|"
                 r"string|basic_string|unique_ptr|shared_ptr|function|queue|stack|priority_queue|array|valarray|"
                 r"any|optional|variant|thread|mutex)\b")
STL_INCLUDE = re.compile(r"#\s*include\s*<(vector|map|unordered_map|set|unordered_set|list|forward_list|deque|string|"
                         r"memory|functional|queue|stack|array|valarray|any|optional|variant|thread|mutex|stdexcept|"
                         r"exception)>")
EXCEPT = re.compile(r"\b(throw|try|catch)\b")
PRAGMA = re.compile(r"#\s*pragma\b(?!\s+once\b)")
UPRAGMA = re.compile(r"\b_Pragma\b")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "catch", "static_assert", "decltype",
            "alignof", "HETGLM_HLS"}


def strip(text):
    """Remove comments and string/char literals, keeping line structure."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(code):
    """(name, body, line) of each function definition in `code` (stripped): an identifier, a parenthesized
    parameter list, optional qualifiers, then a brace-delimited body, at a point outside any function body."""
    code = re.sub(r"\bN\((\w+)\)", r"\1", code)  # glm_math_impl.h names its functions N(name)
    defs = []
    head = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
    i = 0
    while True:
        m = head.search(code, i)
        if not m:
            break
        name = m.group(1)
        # matching parenthesis
        depth, j = 0, m.end() - 1
        while j < len(code):
            if code[j] == "(":
                depth += 1
            elif code[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        k = j + 1
        tail = re.match(r"\s*(const\s*)?(noexcept\s*)?(override\s*)?(->\s*[\w:<>\s\*&]+)?\{", code[k:])
        if name not in KEYWORDS and tail and not code[m.start() - 1:m.start()].isalnum():
            b = k + tail.end() - 1
            depth, e = 0, b
            while e < len(code):
                if code[e] == "{":
                    depth += 1
                elif code[e] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                e += 1
            defs.append((name, code[b + 1:e], code.count("\n", 0, m.start()) + 1))
            i = e + 1
        else:
            i = m.end()
    return defs


def recursion(files):
    """Cycles in the call graph of the functions defined in `files` ({path: stripped code})."""
    graph, where = {}, {}
    for path, code in files.items():
        for name, body, line in functions(code):
            body = re.sub(r"\bN\((\w+)\)", r"\1", body)
            graph.setdefault(name, set()).update(re.findall(r"\b([A-Za-z_]\w*)\s*(?:<[^;(){}]*>)?\s*\(", body))
            where.setdefault(name, f"{os.path.relpath(path, ROOT)}:{line}")
    for name in graph:  # glm_math.h's float/double instances (hetglm_dual_step_f) are its N(hetglm_dual_step)
        graph[name] = {re.sub(r"_[fd]$", "", c) if re.sub(r"_[fd]$", "", c) in graph else c for c in graph[name]}
        graph[name] &= set(graph)
    problems, state = [], {}

    def visit(u, stack):  # iterative-enough for small kernels; the checker itself may recurse
        state[u] = 1
        stack.append(u)
        for w in sorted(graph[u]):
            if state.get(w) == 1:
                cyc = stack[stack.index(w):] + [w]
                problems.append(f"{where[w]}: recursion: {' -> '.join(cyc)}")
            elif w not in state:
                visit(w, stack)
        stack.pop()
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u, [])
    return problems


def check(paths):
    problems, stripped = [], {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            raw = f.read()
        code = strip(raw)
        stripped[path] = code
        rel = os.path.relpath(path, ROOT)
        for no, line in enumerate(code.split("\n"), 1):
            if HEAP_NEW.search(line) or HEAP.search(line):
                problems.append(f"{rel}:{no}: heap allocation: {line.strip()}")
            if STL.search(line) or STL_INCLUDE.search(line):
                problems.append(f"{rel}:{no}: STL container or library type: {line.strip()}")
            if EXCEPT.search(line):
                problems.append(f"{rel}:{no}: exceptions: {line.strip()}")
            if PRAGMA.search(line):
                problems.append(f"{rel}:{no}: pragma outside HETGLM_HLS: {line.strip()}")
            if UPRAGMA.search(line) and os.path.basename(path) != PRAGMA_MACRO_FILE:
                problems.append(f"{rel}:{no}: _Pragma outside portable.hpp: {line.strip()}")
    problems += recursion(stripped)
    return problems


def kernel_files(root):
    out = []
    for d, exts in KERNEL_GLOBS:
        full = os.path.join(root, d)
        out += sorted(os.path.join(full, f) for f in os.listdir(full) if f.endswith(exts))
    out += [os.path.join(root, f) for f in KERNEL_FILES]
    return out


def self_test():
    import tempfile
    bad = {
        "heap": "void f() { float* p = new float[4]; delete[] p; }",
        "malloc": "void f() { void* p = malloc(4); }",
        "stl": "#include <vector>\nvoid f() { std::vector<int> v; }",
        "throw": "void f(int x) { if (x) throw 1; }",
        "pragma": "void f() {\n#pragma HLS PIPELINE II=1\n}",
        "upragma": "void f() { _Pragma(\"HLS UNROLL\") }",
        "recursion": "int g(int x);\nint f(int x) { return x ? g(x - 1) : 0; }\nint g(int x) { return f(x); }",
        "self-recursion": "template <int K> int f(int x) { return x ? f<K>(x - 1) : 0; }",
    }
    good = ("// new delete throw std::vector in a comment\n#pragma once\nconst char* s = \"try new\";\n"
            "HETGLM_HLS(HLS PIPELINE II=1)\nint f(int x) { return x + 1; }\nint g(int x) { return f(x) * 2; }\n")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, code in bad.items():
            p = os.path.join(tmp, name + ".cpp")
            with open(p, "w") as f:
                f.write(code)
            if not check([p]):
                print(f"self-test: rule '{name}' did not catch: {code!r}")
                failures += 1
        p = os.path.join(tmp, "good.cpp")
        with open(p, "w") as f:
            f.write(good)
        got = check([p])
        if got:
            print("self-test: clean snippet flagged:", *got, sep="\n  ")
            failures += 1
    print("self-test:", "FAILED" if failures else f"ok ({len(bad)} bad snippets caught, clean snippet passes)")
    return 1 if failures else 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    root = ROOT
    if "--root" in argv:
        root = os.path.abspath(argv[argv.index("--root") + 1])
    files = [a for a in argv if not a.startswith("--") and a != root] or kernel_files(root)
    problems = check(files)
    for p in problems:
        print(p)
    print(f"HLS subset check: {len(files)} files, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
