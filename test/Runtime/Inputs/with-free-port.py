#!/usr/bin/python3
"""with-free-port.py CMD ARGS...: runs CMD with MASTER_PORT set to a port
that is free now, so that concurrent tests do not collide on 29500.

A port free when picked can still be taken before the run binds it (other
tests' Gloo connections draw ephemeral ports from the same range): a run
that fails saying so is retried, up to three times, with a new port."""
import os
import socket
import subprocess
import sys


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


for attempt in range(3):
    run = subprocess.run(sys.argv[1:], capture_output=True,
                         env=dict(os.environ, MASTER_PORT=str(free_port())))
    if run.returncode == 0 or b"Address already in use" not in run.stderr:
        break
sys.stdout.buffer.write(run.stdout)
sys.stderr.buffer.write(run.stderr)
sys.exit(run.returncode)
