"""gopt's exceptions.

Every error the C++ libraries report reaches Python as one of these, with
the message the command-line tools (gopt-run, gopt-opt) print for the same
failure. Each also derives from the built-in exception a Python user would
catch for it (``ValueError`` for a bad argument, ``LookupError`` for an
unknown name, ...), so ``except ValueError`` keeps working.
"""


class Error(Exception):
    """Base class of every gopt error."""


class InvalidArgument(Error, ValueError):
    """A bad model, pipeline, option or feed (wrong dtype, rank or shape)."""


class NotFound(Error, LookupError):
    """An unknown input or output name, or a file that cannot be opened."""


class FailedPrecondition(Error):
    """The call needs something done first (e.g. every input fed)."""


class Unimplemented(Error, NotImplementedError):
    """Something gopt does not support: an op, a file type, the compiler in
    a runtime-only build."""


class DataLoss(Error):
    """A truncated or corrupt file."""


class ResourceExhausted(Error, MemoryError):
    """More memory than the session's limit allows."""


class InternalError(Error):
    """A bug in gopt; please report it with the model."""


__all__ = [
    "Error",
    "InvalidArgument",
    "NotFound",
    "FailedPrecondition",
    "Unimplemented",
    "DataLoss",
    "ResourceExhausted",
    "InternalError",
]
