#!/usr/bin/env python3
"""Group the refusals of a realworld run into the failure classes of
docs/realworld.md (issue 17), with counts and one example each.

    python3 tools/realworld/triage.py build/realworld

Reads OUT/refusals.csv (why --auto's chosen parameters were not ported).
A refusal that matches no class is printed under "unclassified" with its
message, so new classes are seen, not hidden.
"""
import collections
import csv
import re
import sys

# (class id, issue-17 item, description, predicate(code, why, name, stmt))
def used_in(why):
    m = re.match(r"(\w+) is used in `(.*)`; bamgen rewrites only", why)
    return (m.group(1), m.group(2)) if m else (None, None)


CLASSES = [
    ("R1", 3, "buffer allocated per mode (switch/if over cudaMalloc / cudaMallocManaged / cudaHostAlloc)",
     lambda c, w, n, s: "is allocated twice" in w or ("has no allocation of its own" in w and "cudaMemcpy(" in w and "HostToDevice" in w and "+" not in w)),
    ("R2", 3, "partial copy or set through &p[i] / p + i (cudaMemcpy, cudaMemset)",
     lambda c, w, n, s: s is not None and re.search(r"cudaMem(cpy|set)\w*\(\s*&\s*" + re.escape(n) + r"\s*\[|cudaMem(cpy|set)\w*\([^;]*,\s*&\s*" + re.escape(n) + r"\s*\[|cudaMem(cpy|set)\w*\(\s*" + re.escape(n) + r"\s*\+", s)),
    ("R2b", 3, "buffer filled (cudaMemset/cudaMemcpy) but allocated elsewhere (another function, a pool)",
     lambda c, w, n, s: "has no allocation of its own" in w),
    ("R3", 3, "allocation size written with sizeof *p (false refusal of the allocation itself)",
     lambda c, w, n, s: s is not None and re.search(r"cudaMalloc\w*\(.*sizeof\s*\*\s*" + re.escape(n), s)),
    ("R7", 3, "device-to-device copy / cudaMemcpyDefault between buffers",
     lambda c, w, n, s: s is not None and ("cudaMemcpyDeviceToDevice" in s or "cudaMemcpyDefault" in s)),
    ("R7b", 3, "raw device pointer given to a library (thrust/cub/cufft/nccl/cublas)",
     lambda c, w, n, s: s is not None and re.search(r"thrust::|cub::|cufft|nccl|cublas", s)),
    ("R9", 3, "sub-array (&p[i] or p + i) passed to a kernel launch",
     lambda c, w, n, s: s is not None and "<<<" in s),
    ("R4b", 2, "buffer passed to a host function of the program (checker, launcher, wrapper)",
     lambda c, w, n, s: s is not None and re.search(r"\b\w+\s*(<[^>]*>)?\s*\([^;]*\b" + re.escape(n) + r"\b", s) and not s.lstrip().startswith(n + " =")),
    ("R4", 2, "kernel argument is a parameter or global of the launching function (allocation elsewhere)",
     lambda c, w, n, s: "is not a local variable of" in w and not re.search(r"\(([^)]*[\[.][^)]*|[^)]*->[^)]*)\) is not a local", w)),
    ("R5", 3, "array of device pointers (cols[c]) passed to a kernel",
     lambda c, w, n, s: "is not a local variable of" in w and re.search(r"\([^)]*\[[^)]*\) is not a local", w)),
    ("R5b", 3, "device pointer held in a struct (g.col, g->col) passed to a kernel",
     lambda c, w, n, s: "is not a local variable of" in w),
    ("R8", 6, "--auto chose the parameter in one kernel but not in another kernel the same buffer is passed to",
     lambda c, w, n, s: "whose parameter there is not ported" in w),
    ("R6", 1, "false PORT018: the write goes through a member (a[i].p[j] = v) or into another array indexed by a member (label[e[i].dst] = v)",
     lambda c, w, n, s: c == "PORT018"),
    ("R10", 3, "host pointer arithmetic / aliasing of a buffer (q = p + off; p = q)",
     lambda c, w, n, s: s is not None and re.match(r"\s*\w+\s*=\s*", s)),
    ("K1", 0, "kernel-side: pointer reassigned / aliased / pointer arithmetic used as a pointer (PORT016)",
     lambda c, w, n, s: c == "PORT016"),
    ("K2", 0, "kernel-side: address of an element taken (&p[i]: atomics, __ldg, helpers) (PORT010)",
     lambda c, w, n, s: c == "PORT010"),
    ("K3", 0, "kernel-side: helper called with arrays in different parameters (PORT020)",
     lambda c, w, n, s: c == "PORT020"),
    ("K4", 0, "host-visible memory whose address is taken before the launch (kernelArgs[]) (PORT039)",
     lambda c, w, n, s: c == "PORT039"),
    ("K5", 0, "T** parameters (PORT003)",
     lambda c, w, n, s: c == "PORT003"),
    ("K6", 0, "other kernel-side refusals (casts, members through pointers, comparisons, unknown callees)",
     lambda c, w, n, s: c in ("PORT011", "PORT012", "PORT015", "PORT019")),
    ("R11", 3, "status kept: err = cudaMalloc(&p, ...) / err = cudaMemcpy(...) (\"not a statement of its own\"; the message names the variable, not the statement)",
     lambda c, w, n, s: "not a statement of its own" in w),
    ("R4c", 2, "buffer used in another host statement bamgen does not know (attribute structs, casts, API calls)",
     lambda c, w, n, s: s is not None),
]


def classify(code, why):
    name, stmt = used_in(why)
    if name is None:
        m = re.match(r"(\w+) is ", why)
        name = m.group(1) if m else ""
    for cid, item, desc, pred in CLASSES:
        try:
            if pred(code, why, name, stmt):
                return cid, item, desc
        except re.error:
            continue
    return "?", 0, "unclassified"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/realworld"
    rows = list(csv.DictReader(open(out + "/refusals.csv")))
    count = collections.Counter()
    files = collections.defaultdict(set)
    example = {}
    desc = {}
    for r in rows:
        cid, item, d = classify(r["code"], r["why"])
        key = (cid, item)
        count[key] += 1
        files[key].add(r["project"] + "/" + r["file"])
        desc.setdefault(key, d)
        example.setdefault(key, "%s/%s %s:%s: %s" % (r["project"], r["file"], r["kernel"], r["param"], r["why"][:160]))
    print("| class | item | refusals | files | what | example |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    for key, n in sorted(count.items(), key=lambda kv: (-kv[1], kv[0])):
        print("| %s | %s | %d | %d | %s | %s |" % (key[0], key[1] or "-", n, len(files[key]), desc[key],
                                                example[key].replace("|", "\\|")))
    print("\n%d refusals in %d classes" % (len(rows), len(count)))


if __name__ == "__main__":
    main()
