"""Whether gopt-run's report names the wait libomp really uses.

Reads gopt-run's output with KMP_SETTINGS=1 (libomp prints its effective
settings on stderr when it starts) and prints the blocktime libomp took and
the one the report's omp-wait line describes; exits 1 where they differ.
"""
import re
import sys

text = sys.stdin.read()
effective = text.split("Effective settings:", 1)
if len(effective) < 2:
    sys.exit("no 'Effective settings:' from libomp (is KMP_SETTINGS=1 set?)")
match = re.search(r"KMP_BLOCKTIME=(\d+)", effective[1])
report = re.search(r"omp-wait: \S+ \(libomp[^:]*: ([^)]*)\)", text)
if not match or not report:
    sys.exit("no KMP_BLOCKTIME or no omp-wait line naming libomp")
taken = int(match.group(1))
described = report.group(1)
if described == "sleep at once":
    expected = 0
elif described == "spin, never sleep":
    expected = 2147483647
else:
    spin = re.fullmatch(r"spin (\d+) ms, then sleep", described)
    expected = int(spin.group(1)) if spin else None
print("libomp blocktime %d ms, report: %s" % (taken, described))
if expected != taken:
    print("MISMATCH")
    sys.exit(1)
print("agree")
