#!/usr/bin/python3
"""Before deploying: will this model run on the target, and where would it fail? ferry.check returns the
`ferry check --json` census; this script prints the verdict per target and exits 1 when a node is unsupported.

    /usr/bin/python3 examples/python/check_before_deploy.py MODEL.onnx [--target-isa avx2,fma] [--backends cpu]
"""
import argparse
import collections
import sys

import ferry


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--backends", default="cpu,ref")
    p.add_argument("--target-isa", default=None, help="judge for a CPU with only these extensions")
    args = p.parse_args()
    report = ferry.check(args.model, backends=args.backends.split(","), target_isa=args.target_isa)
    target = report["target"]
    print("%s on %s (ISA %s)" % (args.model, ",".join(target["backends"]), target["isa"]))
    verdicts = collections.Counter(n["verdict"] for n in report["nodes"])
    print("  nodes: " + ", ".join("%d %s" % (c, v) for v, c in sorted(verdicts.items())))
    for n in report["nodes"]:
        if n["verdict"] in ("fallback", "unsupported"):
            print("  %-11s %s (%s): %s" % (n["verdict"], n["name"], n["op"], n["reason"]))
            if n.get("remedy"):
                print("              remedy: %s" % n["remedy"])
    for problem in report["problems"]:
        print("  problem: %s" % problem)
    return 1 if verdicts.get("unsupported") else 0


if __name__ == "__main__":
    sys.exit(main())
