#!/usr/bin/python3
"""Runs a 2-rank gopt-run training across two network namespaces joined by
a veth pair, each rank on its own namespace's address, as on two hosts
(train-data-parallel.test). Needs root (ip netns); otherwise prints
"skipped: WHY" and exits 0.

two-hosts.py GOPT_RUN ARGS... : prints each rank's exit status and stderr.
"""
import os
import subprocess
import sys


def ip(*args):
    return subprocess.run(["ip", *args], capture_output=True, text=True)


def main():
    cmd = sys.argv[1:]
    if os.geteuid() != 0:
        print("skipped: not root (ip netns needs CAP_NET_ADMIN)")
        return 0
    tag = str(os.getpid())
    ns = [f"gopt-dp0-{tag}", f"gopt-dp1-{tag}"]
    veth = [f"gdpa{tag}"[:15], f"gdpb{tag}"[:15]]
    addr = ["10.231.0.1", "10.231.0.2"]
    created = []
    try:
        for n in ns:
            r = ip("netns", "add", n)
            if r.returncode != 0:
                print(f"skipped: ip netns add failed: {r.stderr.strip()}")
                return 0
            created.append(n)
        steps = [("link", "add", veth[0], "type", "veth", "peer", "name",
                  veth[1])]
        for r in range(2):
            steps.append(("link", "set", veth[r], "netns", ns[r]))
        for r in range(2):
            steps += [("-n", ns[r], "addr", "add", addr[r] + "/24", "dev",
                       veth[r]),
                      ("-n", ns[r], "link", "set", veth[r], "up"),
                      ("-n", ns[r], "link", "set", "lo", "up")]
        for s in steps:
            res = ip(*s)
            if res.returncode != 0:
                print(f"skipped: ip {' '.join(s)}: {res.stderr.strip()}")
                return 0
        env = dict(os.environ, WORLD_SIZE="2", MASTER_ADDR=addr[0],
                   MASTER_PORT="29533")
        procs = [subprocess.Popen(
            ["ip", "netns", "exec", ns[r], *cmd],
            env=dict(env, RANK=str(r), LOCAL_RANK="0"),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for r in range(2)]
        for r, p in enumerate(procs):
            try:
                _, err = p.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
            print(f"rank {r} ({addr[r]}) exit status {p.returncode}")
            print(err, end="")
        return 0
    finally:
        for n in created:
            ip("netns", "del", n)


if __name__ == "__main__":
    sys.exit(main())
