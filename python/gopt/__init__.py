"""gopt: optimize, run and train neural-network graphs from Python.

A model is read with :func:`load` (ONNX, TensorFlow GraphDef, gopt's MLIR,
or an already lowered ``.gplan`` plan), optimized with
:meth:`Model.optimize`, saved with :meth:`Model.save`, and run with
:class:`InferenceSession`, whose interface follows onnxruntime's::

    import numpy as np
    import gopt

    model = gopt.load("mnist_cnn.onnx")
    model.optimize(target="cpu")
    session = gopt.InferenceSession(model)
    (scores,) = session.run(None, {"input": np.zeros((1, 1, 28, 28), np.float32)})

Every error is a :class:`gopt.Error` (see :mod:`gopt.errors`) carrying the
message gopt's command-line tools print.
"""

import os as _os

import numpy as _np

from . import errors


def _choose_omp_wait_policy():
    # The OpenMP runtime reads OMP_WAIT_POLICY once (libgomp when it loads,
    # libomp at its first parallel region): as gopt-run does, wait passively
    # when other processes keep the CPUs busy, where spinning threads take
    # the CPU their partners need (a training step 3-5x slower), else spin
    # briefly. Unless the user chose; too late if another package (torch)
    # loaded libgomp first.
    if "OMP_WAIT_POLICY" in _os.environ:
        return
    from ._wait_policy import SPIN_MILLISECONDS, choose
    policy, reason = choose(0)
    _os.environ["GOPT_OMP_WAIT_CHOICE"] = reason
    if policy:
        _os.environ["OMP_WAIT_POLICY"] = policy
    else:
        _os.environ.setdefault("KMP_BLOCKTIME", str(SPIN_MILLISECONDS))


_choose_omp_wait_policy()

from ._gopt import HAVE_COMPILER as _HAVE_COMPILER  # noqa: E402
from ._gopt import Plan as _Plan  # noqa: E402
from ._gopt import Session as _Session  # noqa: E402
from ._gopt import calibrate as _calibrate  # noqa: E402
from .errors import (  # noqa: E402
    DataLoss,
    Error,
    FailedPrecondition,
    InternalError,
    InvalidArgument,
    NotFound,
    ResourceExhausted,
    Unimplemented,
)

from .training import DataLoader, TrainingSession  # noqa: E402

if _HAVE_COMPILER:
    from ._gopt import Graph as _Graph
    from ._gopt import available_passes as _available_passes

__all__ = [
    "load",
    "Model",
    "InferenceSession",
    "available_passes",
    "has_compiler",
    "calibrate",
    "TrainingSession",
    "DataLoader",
    "CalibrationRanges",
    "NodeArg",
    "errors",
    *errors.__all__,
]

_GRAPH_FORMATS = {"onnx": "onnx", "mlir": "mlir", "graphdef": "graphdef",
                  "pb": "graphdef", "pbtxt": "graphdef", "tf": "graphdef"}


def has_compiler():
    """True when this build has the compiler (importers and passes); a
    runtime-only build (``GOPT_BUILD_COMPILER=OFF``) loads and runs
    ``.gplan`` plans only."""
    return _HAVE_COMPILER


def _need_compiler(what):
    if not _HAVE_COMPILER:
        raise Unimplemented(
            f"{what} needs the compiler, and this gopt was built without it "
            "(GOPT_BUILD_COMPILER=OFF); compile the model first with "
            "gopt-translate --emit-plan MODEL -o MODEL.gplan")


def _is_plan_bytes(data):
    # A serialized plan starts with field 1 (format_version, varint): 0x08.
    return data[:1] == b"\x08"


class Model:
    """A graph in memory: what :func:`load` returns.

    A graph file (ONNX, GraphDef, MLIR) is held as gopt IR, which
    :meth:`optimize` and :meth:`quantize` transform in place; a ``.gplan``
    file is already lowered and can only be run or saved as ``.gplan``.
    """

    def __init__(self, _graph=None, _plan=None, _name=""):
        self._graph = _graph
        self._plan = _plan
        self._name = _name

    # -- what it is ---------------------------------------------------------
    @property
    def name(self):
        """The file the model was read from, or ``"<bytes>"``."""
        return self._name

    @property
    def is_plan(self):
        """True for a lowered plan (``.gplan``), which has no IR."""
        return self._graph is None

    def __str__(self):
        """The gopt IR (MLIR), large constants elided; :meth:`ir` gives it
        whole."""
        if self._graph is None:
            return f"<gopt plan '{self._name}': {self._plan.op_count()} ops>"
        return self._graph.ir(True)

    def __repr__(self):
        kind = "plan" if self._graph is None else "graph"
        return f"<gopt.Model {kind} '{self._name}'>"

    def ir(self, elide_large_constants=False):
        """The gopt IR as MLIR text."""
        self._require_graph("ir()")
        return self._graph.ir(elide_large_constants)

    def _require_graph(self, what):
        if self._graph is None:
            raise Unimplemented(
                f"'{self._name}': {what} needs a graph (.onnx, .pb, .pbtxt, "
                ".mlir); a .gplan plan is already lowered")

    def inputs(self):
        """The graph's inputs: dicts of name, dtype and shape (a dynamic
        dimension is its name in the ONNX file, e.g. ``"batch"``, else
        ``None``)."""
        return self._named(self.to_plan().inputs())

    def outputs(self):
        """The graph's outputs, as :meth:`inputs`."""
        return self._named(self.to_plan().outputs())

    def _dim_names(self):
        return {} if self._graph is None else self._graph.dim_names()

    def _named(self, infos):
        return _name_dims(infos, self._dim_names())

    # -- transforms ---------------------------------------------------------
    def optimize(self, target="cpu", precision="f32", layout="auto",
                 passes=None):
        """Optimizes the graph in place and returns the model (so
        ``model = model.optimize()`` and ``model.optimize()`` both work).

        Without ``passes``, runs gopt's default pipeline
        ``gopt-optimize{target=... precision=... layout=...}``: strip debug
        ops, fold constants, fuse and fold batch norm, convert the layout,
        fuse conv + bias + activation, then mixed precision for
        ``precision="bf16"`` or ``"f16"``. ``passes`` replaces that pipeline:
        any registered pipeline, as a string
        (``"builtin.module(gopt-optimize{target=gpu})"``, or
        ``"gopt-fold-constants,canonicalize"``) or a list of pass names
        (see :func:`available_passes`). What each pass changed is in
        :meth:`report`.
        """
        self._require_graph("optimize()")
        if passes is None:
            layout_name = {"auto": "auto", "nchw": "NCHW", "nhwc": "NHWC"}.get(
                str(layout).lower(), layout)
            pipeline = (f"builtin.module(gopt-optimize{{target={target} "
                        f"precision={precision} layout={layout_name}}})")
        elif isinstance(passes, str):
            pipeline = passes
        else:
            pipeline = ",".join(passes)
        self._graph.run_pipeline(pipeline)
        return self

    def quantize(self, ranges, fallback=False):
        """Static int8 quantization in place (``gopt-quantize``) with the
        activation ranges from :func:`calibrate`; returns the model. Run it
        on the graph the ranges were calibrated on, so names match. With
        ``fallback``, tensors without a range stay f32 (with a remark)
        instead of raising."""
        self._require_graph("quantize()")
        import tempfile
        ranges_json = ranges.to_json() if isinstance(ranges, CalibrationRanges) \
            else str(ranges)
        with tempfile.TemporaryDirectory(prefix="gopt-") as tmp:
            path = _os.path.join(tmp, "ranges.json")
            with open(path, "w") as f:
                f.write(ranges_json)
            self._graph.run_pipeline(
                "builtin.module(func.func(gopt-quantize{calibration="
                f"{path} fallback={'true' if fallback else 'false'}}}))")
        return self

    def copy(self):
        """An independent copy."""
        if self._graph is None:
            return Model(_plan=self._plan, _name=self._name)
        return Model(_graph=self._graph.clone(), _name=self._name)

    def report(self):
        """What the passes run so far changed, as a list of dicts
        ``{"pass": "gopt-fuse-batch-norm", "message": "fused 2 batch norms",
        "location": ...}``, in order."""
        if self._graph is None:
            return []
        return self._graph.remarks()

    # -- output -------------------------------------------------------------
    def to_plan(self):
        """The lowered plan (an internal object sessions run)."""
        if self._graph is None:
            return self._plan
        return self._graph.to_plan()

    def to_onnx(self, opset=0):
        """The graph as ONNX ``ModelProto`` bytes, at ``opset`` (14 to 21),
        or by default at the lowest opset from 14 on that its ops need."""
        self._require_graph("to_onnx()")
        return self._graph.to_onnx(opset)

    def save(self, path):
        """Writes the model by ``path``'s extension: ``.mlir`` (text),
        ``.mlirbc`` (bytecode), ``.onnx`` or ``.gplan`` (a plan for
        ``gopt-run`` and runtime-only builds)."""
        path = _os.fspath(path)
        if self._graph is None:
            if not path.endswith(".gplan"):
                raise Unimplemented(
                    f"'{path}': a .gplan plan can only be saved as .gplan")
            self._plan.save(path)
        else:
            self._graph.save(path)


def load(path_or_bytes, format=None):
    """Reads a model: a path (``str`` or ``os.PathLike``) or the file's
    bytes.

    Formats by extension: ``.onnx``, ``.pb``/``.pbtxt`` (TensorFlow
    GraphDef), ``.mlir``/``.mlirbc`` (gopt IR), ``.gplan`` (a lowered plan).
    ``format`` ("onnx", "graphdef", "mlir", "gplan") overrides the extension
    and, for bytes, the guess (MLIR if it looks like MLIR, a plan if it
    parses as one, else ONNX). Raises :class:`gopt.Error` (e.g.
    :class:`gopt.InvalidArgument` for a truncated file) naming the file.
    """
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(path_or_bytes)
        fmt = (format or "").lower()
        if fmt == "gplan" or (not fmt and _is_plan_bytes(data)):
            try:
                return Model(_plan=_Plan.load_bytes(data, "<bytes>"),
                             _name="<bytes>")
            except Error:
                if fmt == "gplan":
                    raise
        _need_compiler("loading a graph")
        return Model(_graph=_Graph.load_bytes(data, _GRAPH_FORMATS.get(fmt, fmt)),
                     _name="<bytes>")
    path = _os.fspath(path_or_bytes)
    fmt = (format or "").lower()
    if fmt == "gplan" or (not fmt and path.lower().endswith(".gplan")):
        return Model(_plan=_Plan.load_file(path), _name=path)
    _need_compiler(f"loading '{path}'")
    return Model(_graph=_Graph.load_file(path, _GRAPH_FORMATS.get(fmt, fmt)),
                 _name=path)


def available_passes():
    """Every registered pass and pipeline usable in
    ``Model.optimize(passes=...)``: dicts of ``name``, ``description``,
    ``kind`` ("pass" or "pipeline") and ``options``."""
    _need_compiler("available_passes()")
    return _available_passes()


def _name_dims(infos, dim_names):
    """``infos`` with each dynamic dimension (None) named as in
    ``dim_names`` ({binding name: [name or "" per dimension]})."""
    for info in infos:
        names = dim_names.get(info["name"])
        if names and len(names) == len(info["shape"]):
            info["shape"] = [names[i] if d is None and names[i] else d
                             for i, d in enumerate(info["shape"])]
    return infos


def _as_model(model_or_path):
    if isinstance(model_or_path, Model):
        return model_or_path
    return load(model_or_path)


def _as_plan(model_or_path):
    return _as_model(model_or_path).to_plan()


class InferenceSession:
    """Runs a model, as onnxruntime's ``InferenceSession`` does.

    ``model_or_path`` is a :class:`Model` (optimized or not) or anything
    :func:`load` reads; a path is run as the file says, without
    optimization (as ``gopt-run`` without ``--optimize``). ``backend`` is
    "cpu" (oneDNN where it has a kernel), "reference" or "cuda" (when
    built). ``threads`` sets the intra-op threads (``None``: the library
    default); ``memory_limit`` caps the memory the session plans, in bytes.
    """

    def __init__(self, model_or_path, backend="cpu", threads=None,
                 memory_limit=None):
        model = _as_model(model_or_path)
        self._dim_names = model._dim_names()
        plan = model.to_plan()
        self._session = _Session(plan, backend=backend,
                                 threads=int(threads or 0),
                                 memory_limit=int(memory_limit or 0))
        self.backend = backend

    def get_inputs(self):
        """The inputs: :class:`NodeArg` with ``name``, ``dtype`` (a numpy
        dtype name) and ``shape`` (a dynamic dimension is its name in the
        ONNX file, e.g. ``"batch"``, else ``None``)."""
        return [NodeArg(**d) for d in
                _name_dims(self._session.inputs(), self._dim_names)]

    def get_outputs(self):
        """The outputs, as :meth:`get_inputs`."""
        return [NodeArg(**d) for d in
                _name_dims(self._session.outputs(), self._dim_names)]

    def run(self, output_names, input_feed):
        """Runs the model once on ``input_feed`` (``{name: ndarray}``, every
        input) and returns the outputs ``output_names`` (all when ``None``)
        as a list of new ndarrays.

        Inputs are read in place when C-contiguous (others are copied first);
        their dtype, rank and static dimensions must match the model's, or
        :class:`gopt.InvalidArgument` names the input. The GIL is released
        while the model runs.
        """
        if isinstance(output_names, str):
            output_names = [output_names]
        feeds = {}
        for name, value in dict(input_feed).items():
            if not isinstance(value, _np.ndarray):
                value = _np.asarray(value)
            feeds[name] = value
        return self._session.run(list(output_names or []), feeds)

    def profile(self, input_feed, iterations=10, warmup=1, trace=None):
        """Runs ``warmup`` then ``iterations`` times and returns the per-op
        table, slowest first: dicts of ``name``, ``kind``, ``device``,
        ``implementation``, ``calls``, ``total_ms``, ``mean_ms``,
        ``min_run_ms`` (the least time one run spent in the op: the figure
        least disturbed by other load), ``share`` (of all ops' time) and
        ``flops`` (per call: the op's
        arithmetic, 0 for memory-bound ops). With ``trace`` (a path), one more run
        is written there as a Chrome/Perfetto trace (``chrome://tracing``).
        """
        for _ in range(max(0, int(warmup))):
            self.run(None, input_feed)
        self._session.reset_profiles()
        for _ in range(max(1, int(iterations))):
            self.run(None, input_feed)
        rows = self._session.profile()
        if trace is not None:
            self.run(None, input_feed)
            self._session.write_trace(_os.fspath(trace))
        return rows

    def memory(self):
        """The memory the session planned, in bytes, by kind."""
        return self._session.memory()


class NodeArg:
    """An input or output: ``name``, ``dtype`` (numpy name, e.g.
    "float32") and ``shape`` (ints; a dynamic dimension is its ONNX name,
    e.g. "batch", or ``None``)."""

    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name, dtype, shape):
        self.name = name
        self.dtype = dtype
        self.shape = list(shape)

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, dtype={self.dtype!r}, shape={self.shape!r})"

    def __eq__(self, other):
        return (isinstance(other, NodeArg) and self.name == other.name
                and self.dtype == other.dtype and self.shape == other.shape)


class CalibrationRanges:
    """Activation ranges from :func:`calibrate`, for :meth:`Model.quantize`.

    ``tensors`` maps each calibrated plan tensor to ``(min, max,
    threshold)``; the threshold is the symmetric clip |x| the int8 scale is
    computed from (scale = threshold / 127). :meth:`save` writes the JSON
    document ``gopt-run --calibrate`` writes, so a file from either works
    with ``gopt-opt --gopt-quantize=calibration=FILE`` and
    :meth:`load`.
    """

    def __init__(self, method, tensors, json_text, batches=0, percentile=0.0):
        self.method = method
        self.tensors = dict(tensors)
        self.batches = batches
        self.percentile = percentile
        self._json = json_text

    def to_json(self):
        """The ranges as gopt's calibration JSON."""
        return self._json

    def save(self, path):
        """Writes :meth:`to_json` to ``path``."""
        with open(_os.fspath(path), "w") as f:
            f.write(self._json)

    @classmethod
    def load(cls, path):
        """Reads a calibration file (``gopt-run --calibrate``'s output)."""
        import json
        with open(_os.fspath(path)) as f:
            text = f.read()
        try:
            doc = json.loads(text)
            tensors = {name: (t["min"], t["max"], t["threshold"])
                       for name, t in doc["tensors"].items()}
        except (ValueError, KeyError, TypeError) as e:
            raise InvalidArgument(
                f"'{path}': not a gopt calibration file ({e})") from None
        return cls(doc.get("method", ""), tensors, text,
                   doc.get("batches", 0), doc.get("percentile", 0.0))

    def __repr__(self):
        return (f"<gopt.CalibrationRanges {self.method}: "
                f"{len(self.tensors)} tensors over {self.batches} batches>")


def calibrate(model, batches, method="minmax", percentile=99.99,
              backend="cpu", threads=None):
    """Runs ``model`` over ``batches`` and returns the
    :class:`CalibrationRanges` of its activations (the inputs and results of
    conv2d, matmul, add, bias_add, relu, relu6, clip, pooling and concat
    ops, and the graph inputs), as ``gopt-run --calibrate`` does.

    ``batches`` is an iterable of ``{input name: ndarray}`` (an array alone
    for a model with one input). ``method`` is "minmax", "percentile" (with
    ``percentile``) or "entropy" (TensorRT's KL divergence). Calibrate the
    model as it will be quantized (after :meth:`Model.optimize`), so the
    tensor names match.
    """
    plan = _as_plan(model)
    inputs = plan.inputs()
    feeds = []
    for batch in batches:
        if not isinstance(batch, dict):
            if len(inputs) != 1:
                raise InvalidArgument(
                    "a calibration batch given as an array needs a model with "
                    f"one input; this one has {len(inputs)}: pass "
                    "{name: array} dicts")
            batch = {inputs[0]["name"]: batch}
        feeds.append({k: _np.asarray(v) for k, v in batch.items()})
    result = _calibrate(plan, feeds, method=method,
                        percentile=float(percentile), backend=backend,
                        threads=int(threads or 0))
    return CalibrationRanges(result["method"], result["tensors"],
                             result["json"], result["batches"],
                             result["percentile"])
