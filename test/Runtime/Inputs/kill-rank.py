#!/usr/bin/python3
"""Starts a 2-rank gopt-run training (torchrun's environment), kills rank 1
once training runs, and reports how rank 0 ended (train-data-parallel.test).

kill-rank.py GOPT_RUN ARGS... : prints rank 0's exit status, the seconds it
took to exit after the kill, and its stderr.
kill-rank.py --mismatch GOPT_RUN ARGS... : rank 1 gets "--lr 0.25" too and
nothing is killed; prints both ranks' exit status and stderr.
kill-rank.py --stop GOPT_RUN ARGS... : rank 1 is stopped (SIGSTOP: a hung
rank) instead of killed.
"""
import os
import signal
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    cmd = sys.argv[1:]
    mismatch = cmd[0] == "--mismatch"
    stop = cmd[0] == "--stop"
    if mismatch or stop:
        cmd = cmd[1:]
    env = dict(os.environ, WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()))
    ranks = []
    for r in range(2):
        extra = ["--lr", "0.25"] if mismatch and r == 1 else []
        ranks.append(subprocess.Popen(
            cmd + extra, env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
            stdout=subprocess.PIPE if r == 0 else subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True))
    if mismatch:
        for r, p in enumerate(ranks):
            _, err = p.communicate(timeout=60)
            print(f"rank {r} exit status {p.returncode}")
            print(err, end="")
        return 0
    # Rank 0 prints its first progress line once the ranks run steps.
    line = ranks[0].stdout.readline()
    while line and "step" not in line:
        line = ranks[0].stdout.readline()
    time.sleep(0.2)
    if stop:
        ranks[1].send_signal(signal.SIGSTOP)
    else:
        ranks[1].kill()
    killed = time.monotonic()
    try:
        _, err = ranks[0].communicate(timeout=60)
    except subprocess.TimeoutExpired:
        ranks[0].kill()
        print("rank 0 did not exit within 60 s")
        return 1
    if stop:
        ranks[1].kill()
    ranks[1].wait()
    print(f"rank 0 exit status {ranks[0].returncode}")
    print(f"rank 0 exited {time.monotonic() - killed:.0f} s after the kill")
    print(err, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
