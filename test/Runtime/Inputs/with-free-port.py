#!/usr/bin/python3
"""with-free-port.py CMD ARGS...: runs CMD with MASTER_PORT set to a port
that is free now, so that concurrent tests do not collide on 29500."""
import os
import socket
import subprocess
import sys

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
sys.exit(subprocess.run(sys.argv[1:],
                        env=dict(os.environ, MASTER_PORT=str(port))).returncode)
