"""Runs benchmarks/gpu/run.py's main() without a GPU: a fake bundle whose
gopt-run writes a report (2 ms a step, 3 ms with GOPT_CUDA_CONV_GRAPH=0)
and a PyTorch timing of 4 ms a step stand in for the device.

  gpu-bench-harness.py BENCHMARKS_GPU_DIR WORK_DIR [run.py arguments...]
"""
import os
import stat
import sys

gpu_dir, work = sys.argv[1], sys.argv[2]
bundle = os.path.join(work, "bundle")
os.makedirs(os.path.join(bundle, "bin"), exist_ok=True)
os.makedirs(os.path.join(bundle, "models"), exist_ok=True)
open(os.path.join(bundle, "models", "resnet18.f32.gplan"), "w").close()
fake = os.path.join(bundle, "bin", "gopt-run")
with open(fake, "w") as f:
    f.write("""#!/usr/bin/python3
import json, os, sys
ms = 3.0 if os.environ.get("GOPT_CUDA_CONV_GRAPH") == "0" else 2.0
batch = int(sys.argv[sys.argv.index("--batch") + 1])
with open(sys.argv[sys.argv.index("--json") + 1], "w") as out:
    json.dump({"median_ms": ms, "throughput_per_s": batch * 1e3 / ms}, out)
""")
os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)

sys.path.insert(0, gpu_dir)
import run  # noqa: E402

run.time_torch = lambda name, batch, *rest: {
    "median_ms": 4.0, "throughput_per_s": batch * 1e3 / 4.0}
run.torch.cuda.get_device_name = lambda: "stand-in GPU"
sys.argv = ["run.py", "--bundle", bundle, "--out", os.path.join(work, "out")
            ] + sys.argv[3:]
run.main()
print(open(os.path.join(work, "out", "gpu.md")).read())
