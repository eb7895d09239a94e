"""Type stubs of the gopt package (docstrings are in the modules)."""
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, TypedDict, Union

import numpy as np

from . import errors as errors
from .errors import (
    DataLoss as DataLoss,
    Error as Error,
    FailedPrecondition as FailedPrecondition,
    InternalError as InternalError,
    InvalidArgument as InvalidArgument,
    NotFound as NotFound,
    ResourceExhausted as ResourceExhausted,
    Unimplemented as Unimplemented,
)
from .training import DataLoader as DataLoader, TrainingSession as TrainingSession

_Path = Union[str, "os.PathLike[str]"]
_Feed = Mapping[str, Any]

class _TensorInfo(TypedDict):
    name: str
    dtype: str
    shape: List[Union[int, str, None]]

_PassRemark = TypedDict("_PassRemark", {"pass": str, "message": str, "location": str})

class _ProfileRow(TypedDict):
    name: str
    kind: str
    device: str
    implementation: str
    calls: int
    total_ms: float
    mean_ms: float
    min_run_ms: float
    share: float
    flops: float

def has_compiler() -> bool: ...
def load(path_or_bytes: Union[_Path, bytes, bytearray, memoryview],
         format: Optional[str] = ...) -> Model: ...
def available_passes() -> List[Dict[str, Any]]: ...

class Model:
    @property
    def name(self) -> str: ...
    @property
    def is_plan(self) -> bool: ...
    def ir(self, elide_large_constants: bool = ...) -> str: ...
    def inputs(self) -> List[_TensorInfo]: ...
    def outputs(self) -> List[_TensorInfo]: ...
    def optimize(self, target: str = ..., precision: str = ..., layout: str = ...,
                 passes: Union[None, str, Sequence[str]] = ...) -> Model: ...
    def quantize(self, ranges: Union[CalibrationRanges, str],
                 fallback: bool = ...) -> Model: ...
    def copy(self) -> Model: ...
    def report(self) -> List[_PassRemark]: ...
    def to_plan(self) -> Any: ...
    def to_onnx(self, opset: int = 0) -> bytes: ...
    def save(self, path: _Path) -> None: ...

class NodeArg:
    name: str
    dtype: str
    shape: List[Union[int, str, None]]
    def __init__(self, name: str, dtype: str, shape: Sequence[Union[int, str, None]]) -> None: ...

class InferenceSession:
    backend: str
    def __init__(self, model_or_path: Union[Model, _Path, bytes], backend: str = ...,
                 threads: Optional[int] = ..., memory_limit: Optional[int] = ...) -> None: ...
    def get_inputs(self) -> List[NodeArg]: ...
    def get_outputs(self) -> List[NodeArg]: ...
    def run(self, output_names: Union[None, str, Sequence[str]],
            input_feed: _Feed) -> List[np.ndarray]: ...
    def profile(self, input_feed: _Feed, iterations: int = ..., warmup: int = ...,
                trace: Optional[_Path] = ...) -> List[_ProfileRow]: ...
    def memory(self) -> Dict[str, int]: ...

class CalibrationRanges:
    method: str
    tensors: Dict[str, Tuple[float, float, float]]
    batches: int
    percentile: float
    def __init__(self, method: str, tensors: Mapping[str, Tuple[float, float, float]],
                 json_text: str, batches: int = ..., percentile: float = ...) -> None: ...
    def to_json(self) -> str: ...
    def save(self, path: _Path) -> None: ...
    @classmethod
    def load(cls, path: _Path) -> CalibrationRanges: ...

def calibrate(model: Union[Model, _Path],
              batches: Iterable[Union[_Feed, np.ndarray]],
              method: str = ..., percentile: float = ..., backend: str = ...,
              threads: Optional[int] = ...) -> CalibrationRanges: ...
