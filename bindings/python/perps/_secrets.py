"""Secret arguments (wallet keys, API tokens, Ed25519 keys): copied into ctypes buffers that
the binding overwrites with zeros once the call returned, failed calls included.

A ``str`` cannot be wiped (nor can its ``bytes`` encoding, which this makes): a caller who
reads a key from a vault can pass it as a ``bytearray`` (or a C-contiguous ``memoryview`` of
bytes) instead, and wipe that after the call; the binding only reads it. Its bytes are copied
straight from the caller's buffer into the ctypes buffer (no ``bytes`` copy is made); they must
be UTF-8, which the library checks (``INVALID_ARGUMENT`` naming the argument, as for any
argument). An argument holding a NUL byte is refused here, as a ``str`` holding one is.
"""

from __future__ import annotations

from ctypes import create_string_buffer, memset, sizeof
from typing import Any, Callable, List, Optional, Union

from ._errors import Code, PerpsError

#: A secret argument: ``str`` (not wipeable), or bytes the caller can wipe (``bytearray``, a
#: writable ``memoryview``; ``bytes`` is accepted too, though it cannot be wiped either).
Secret = Union[str, bytes, bytearray, memoryview]

#: Tests only: told of each buffer when made ("made", its bytes) and when wiped ("wiped", its
#: bytes after the wipe, before it is dropped), so that a test can check every one is zeros.
_hook: Optional[Callable[[str, bytes], None]] = None


class _Secrets:
    """The buffers of one call's secret arguments: ``with _Secrets() as s: fn(s.add(...))``
    wipes every one as the block is left, however it is left."""

    def __init__(self) -> None:
        self._buffers: List[Any] = []

    def __enter__(self) -> _Secrets:
        return self

    def __exit__(self, *exc: object) -> None:
        for buffer in self._buffers:
            memset(buffer, 0, sizeof(buffer))
            hook = _hook
            if hook is not None:
                hook("wiped", buffer.raw)
        self._buffers.clear()

    def add(self, name: str, value: Any) -> Any:
        """``value`` as NUL-terminated UTF-8 in a ctypes buffer, passed where the C function
        takes ``const char *``; wiped when the block is left."""
        if isinstance(value, str):
            source = memoryview(value.encode("utf-8"))
        elif isinstance(value, (bytes, bytearray, memoryview)):
            source = memoryview(value)
            if not source.c_contiguous or source.itemsize != 1 or source.format not in ("B", "b", "c"):
                raise TypeError(f"perps: {name} must be a C-contiguous buffer of bytes")
            source = source.cast("B")
        else:
            raise TypeError(f"perps: {name} must be str, bytes, bytearray or memoryview, not {type(value).__name__}")
        if 0 in source:  # read in place: no copy
            raise PerpsError(Code.INVALID_ARGUMENT, f"{name} contains a NUL character")
        n = len(source)
        buffer = create_string_buffer(n + 1)  # zeros: the NUL after the bytes
        self._buffers.append(buffer)  # before the copy: wiped from here on
        memoryview(buffer).cast("B")[:n] = source
        hook = _hook
        if hook is not None:
            hook("made", buffer.raw)
        return buffer
