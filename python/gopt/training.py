"""Training from Python: :class:`TrainingSession` (gopt's compiled training
step, as ``gopt-run --train`` runs it) and :class:`DataLoader` (gopt's input
pipeline as an iterator over batches)."""

import os
import tempfile

import numpy as np

from ._gopt import Loader as _Loader
from ._gopt import Trainer as _Trainer
from .errors import InvalidArgument

__all__ = ["TrainingSession", "DataLoader"]


class TrainingSession:
    """A model's training step, compiled once: the loss, its gradients
    (gopt-autodiff) and the optimizer update in one plan whose parameters
    and optimizer state stay in the session between steps.

    ``model`` is a graph :class:`gopt.Model` or a model file path; a
    ``.gplan`` must already be a compiled training step (what a
    runtime-only build, without the compiler, can train). ``loss`` is
    "softmax-cross-entropy" (on the first output, with integer labels),
    "mse", or "none" (the graph returns ``loss``). ``optimizer`` is "adam"
    or "sgd" (with ``momentum``); ``lr=None`` takes the optimizer's default.
    ``precision`` "bf16" or "f16" trains in mixed precision (parameters stay
    f32; f16 uses dynamic loss scaling unless ``loss_scale`` says
    otherwise). ``batch_size`` is the batch the plan is compiled for (steps
    may use others); ``seed`` seeds dropout.

    The same options and seed give the same steps as ``gopt-run --train``.
    """

    def __init__(self, model, loss="softmax-cross-entropy", optimizer="adam",
                 lr=1e-3, precision="f32", backend="cpu", threads=None,
                 batch_size=64, momentum=0.0, weight_decay=0.0,
                 loss_scale=None, seed=1234, memory_limit=None):
        from . import Model  # the package imports this module
        self._tmp = None
        if isinstance(model, Model):
            # The trainer compiles from a file (and again, for evaluation,
            # on the first evaluate()): a copy that lives as long as the
            # session. A plan must already be a training step (a runtime-only
            # build has no compiler to make one).
            self._tmp = tempfile.TemporaryDirectory(prefix="gopt-train-")
            path = os.path.join(self._tmp.name, "model.gplan" if model.is_plan
                                else "model.mlirbc")
            model.save(path)
        else:
            path = os.fspath(model)
        self._options = {
            "model": path, "backend": backend, "threads": int(threads or 0),
            "memory_limit": int(memory_limit or 0), "loss": loss,
            "optimizer": optimizer, "lr": -1.0 if lr is None else float(lr),
            "momentum": float(momentum), "weight_decay": float(weight_decay),
            "precision": precision, "loss_scale": loss_scale or "",
            "batch": int(batch_size), "seed": int(seed),
        }
        self._trainer = _Trainer(self._options)
        self._info = self._trainer.info()

    @property
    def input_name(self):
        """The graph's data input (the other input is ``labels``)."""
        return self._info["data_input"]

    @property
    def example_shape(self):
        """One example's shape (the data input without its batch)."""
        return tuple(self._info["example_shape"])

    @property
    def num_classes(self):
        """Classes of the softmax cross-entropy loss."""
        return self._info["num_classes"]

    @property
    def loss_scale(self):
        """The dynamic loss scale now (0 without dynamic scaling)."""
        return self._trainer.info()["loss_scale"]

    @property
    def skipped_steps(self):
        """Steps skipped by dynamic loss scaling (inf/NaN gradients)."""
        return self._trainer.info()["skipped_steps"]

    def step(self, x, y):
        """One optimizer step on inputs ``x`` (float32 ``[B, *example_shape]``)
        and labels ``y`` (int64 or int32 ``[B]``); returns the loss. A NaN or
        infinite loss is returned, not raised. The GIL is released while the
        step runs."""
        return self._trainer.step(np.asarray(x), np.asarray(y))

    def evaluate(self, x=None, y=None, data=None, batch_size=500):
        """Accuracy and mean softmax cross-entropy of the forward graph with
        the current parameters, on arrays ``x``, ``y`` or on a data spec
        (``data="fashion-mnist-test"``, see :class:`DataLoader`). Returns a
        dict of ``accuracy`` (0..1), ``loss``, ``correct`` and ``total``."""
        if data is not None:
            return self._trainer.evaluate_data(data)
        if x is None or y is None:
            raise InvalidArgument("evaluate() needs x and y, or data=SPEC")
        return self._trainer.evaluate(np.asarray(x), np.asarray(y),
                                      int(batch_size))

    def parameters(self):
        """The trained parameters (not the optimizer's state) as new
        ndarrays, by name, in plan order."""
        return self._trainer.parameters()

    def set_parameters(self, values):
        """Replaces parameters by name (``{name: ndarray}``); each must keep
        its shape and dtype."""
        for name, value in dict(values).items():
            self._trainer.set_parameter(name, np.asarray(value))

    def save(self, directory):
        """Writes every parameter to ``directory/NAME.npy`` (as
        ``gopt-run --save-params``; '/' in names becomes '__')."""
        self._trainer.save(os.fspath(directory))

    def load(self, directory):
        """Reads the parameters :meth:`save` (or ``gopt-run
        --save-params``) wrote."""
        self._trainer.load(os.fspath(directory))

    def profile(self):
        """The training step's per-op times over all steps so far, slowest
        first (dicts as :meth:`InferenceSession.profile`'s)."""
        return self._trainer.profile()

    def data(self, spec, **kwargs):
        """A :class:`DataLoader` over ``spec`` with this model's example
        shape and classes; ``kwargs`` as :class:`DataLoader`'s."""
        kwargs.setdefault("example_shape", self.example_shape)
        kwargs.setdefault("num_classes", self.num_classes)
        return DataLoader(spec, **kwargs)


class DataLoader:
    """gopt's input pipeline as an iterator over ``(inputs, labels)``
    batches: worker threads fill a bounded, ordered prefetch queue, so batch
    k always holds the same examples whatever the number of threads.

    ``spec`` is one of
      - ``"fashion-mnist"`` / ``"fashion-mnist-test"`` (Debian's
        dataset-fashion-mnist),
      - ``"idx:IMAGES,LABELS"`` (MNIST IDX files, raw or gzip'd),
      - ``"npy:INPUTS,LABELS"`` (.npy files),
      - ``"tfrecord:FILE[,FILE...]"`` (tf.train.Example records with
        ``image_feature`` and ``label_feature``),
      - ``"fake"`` (fixed random examples of ``example_shape``).

    Inputs are float32 ``[B, *example_shape]`` (u8 pixels scaled to [0,1],
    then ``(x - mean) / std`` with ``normalize=(mean, std)``), labels int64
    ``[B]``. Each epoch is shuffled from ``(seed, epoch)`` when ``shuffle``;
    ``epochs=None`` repeats forever. :meth:`stats` gives the queue
    statistics and :meth:`verdict` says whether the consumer waited on the
    data or the data on the consumer.
    """

    def __init__(self, spec, batch_size=64, shuffle=True, seed=1234, epochs=1,
                 drop_last=True, prefetch=4, threads=2,
                 example_shape=(1, 28, 28), num_classes=10,
                 normalize=(0.0, 1.0), image_feature="image",
                 label_feature="label"):
        mean, std = normalize
        options = {"normalize_mean": float(mean), "normalize_std": float(std),
                   "image_feature": image_feature,
                   "label_feature": label_feature}
        self.spec = spec
        self.batch_size = int(batch_size)
        self._loader = _Loader(
            spec, [int(d) for d in example_shape], int(num_classes), options,
            batch=self.batch_size, shuffle=bool(shuffle), seed=int(seed),
            prefetch=int(prefetch), threads=int(threads),
            epochs=-1 if epochs is None else int(epochs),
            drop_last=bool(drop_last))

    def __iter__(self):
        return self

    def __next__(self):
        """The next ``(inputs, labels)``; waits (without the GIL) for a
        worker when the batch is not ready."""
        return self._loader.next()

    def __len__(self):
        """Batches over all epochs."""
        total = self._loader.total_batches()
        if total < 0:
            raise TypeError("an endless DataLoader (epochs=None) has no len()")
        return total

    @property
    def batches_per_epoch(self):
        """Batches in one epoch (after ``drop_last``)."""
        return self._loader.batches_per_epoch()

    @property
    def example_shape(self):
        """One example's shape, as the data has it."""
        return tuple(self._loader.example_shape())

    def __repr__(self):
        return f"<gopt.DataLoader {self._loader.describe()}, batch {self.batch_size}>"

    def stats(self):
        """Queue statistics so far: ``batches``, ``samples``, ``capacity``,
        ``mean_fill`` (batches ready when one was asked for),
        ``fraction_empty`` (share of requests that had to wait),
        ``wait_seconds``, ``fill_histogram`` and ``compute_seconds`` (time
        the consumer spent between requests)."""
        return self._loader.stats()

    def verdict(self, compute_seconds=None):
        """"data-bound: ..." or "compute-bound: ..." with the numbers, as
        ``gopt-run --train`` reports; ``compute_seconds`` defaults to the
        time spent between requests."""
        return self._loader.verdict(compute_seconds)
