"""Checks docs/environment.md against the GOPT_* variables the sources read.

Every "GOPT_X" (or 'GOPT_X') string literal in runtime/, lib/, tools/ and
python/ names an environment variable (getenv, envSwitchOn, setenv,
os.environ); each must have a table row in docs/environment.md, and every
GOPT_ name the document mentions must still be such a literal.
"""

import os
import re
import sys

root = sys.argv[1]
literal = re.compile(r"""["'](GOPT_[A-Z0-9_]+)["']""")
suffixes = (".cpp", ".cc", ".c", ".h", ".hpp", ".cu", ".cuh", ".py")

read = set()
for top in ["runtime", "lib", "tools", "python"]:
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for name in files:
            if name.endswith(suffixes):
                with open(os.path.join(dirpath, name), errors="replace") as f:
                    read.update(literal.findall(f.read()))

doc_path = os.path.join(root, "docs", "environment.md")
with open(doc_path) as f:
    doc = f.read()
rows = set(re.findall(r"^\| `(GOPT_[A-Z0-9_]+)` \|", doc, re.M))
mentioned = set(re.findall(r"\bGOPT_[A-Z0-9_]*[A-Z0-9]\b", doc))

errors = []
for name in sorted(read - rows):
    errors.append(f"{name} is read by the sources but has no row in "
                  "docs/environment.md")
for name in sorted(mentioned - read):
    errors.append(f"{name} is in docs/environment.md but no source reads it")
if not read:
    errors.append(f"no GOPT_ string literals found under {root}")
if errors:
    print("\n".join(errors), file=sys.stderr)
    sys.exit(1)
print(f"docs/environment.md: {len(rows)} variables, all read by the sources")
