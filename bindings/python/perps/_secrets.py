"""Secret arguments (wallet keys, API tokens, Ed25519 keys): copied into a ctypes buffer that
the binding overwrites with zeros once the call returned, failed calls included, whatever
interrupts it.

A ``str`` cannot be wiped (nor can its ``bytes`` encoding, which this makes): a caller who
reads a key from a vault can pass it as a ``bytearray`` (or a C-contiguous ``memoryview`` of
bytes) instead, and wipe that after the call; the binding only reads it. Its bytes are copied
straight from the caller's buffer into the ctypes buffer (no ``bytes`` copy is made); they must
be UTF-8, which the library checks (``INVALID_ARGUMENT`` naming the argument, as for any
argument). An argument holding a NUL byte is refused here, as a ``str`` holding one is, before
any secret is copied.

Every function taking secrets has this shape, and no other::

    secrets = _Secrets()
    try:
        key, = secrets.pack(("private_key", private_key))
        return _call_str(..., key)
    finally:
        secrets.wipe()

Why: an exception a signal handler raises (Ctrl-C's KeyboardInterrupt) can come at a Python
function's entry, after a call returns or at a backward jump. A ``with`` block's ``__exit__``
or a wiping method is a Python function: one landing at its entry skipped the wipe, leaving
the secret in the buffer until the memory is reused. Here ``wipe`` is a ``functools.partial``
of ``ctypes.memset`` (C calling C, no Python frame), so from the ``finally`` nothing can come
before the buffer is zeros. All of one call's secrets share one buffer, wiped by that one
call. ``pack`` registers the buffer as ``wipe``'s before it copies anything into it: one
landing before that finds a buffer of zeros. tests/test_interrupts.py tries every such point.
"""

from __future__ import annotations

from ctypes import c_char, create_string_buffer, memset
from functools import partial
from typing import Any, Callable, List, Optional, Tuple, Union

from ._errors import Code, PerpsError

#: A secret argument: ``str`` (not wipeable), or bytes the caller can wipe (``bytearray``, a
#: writable ``memoryview``; ``bytes`` is accepted too, though it cannot be wiped either).
Secret = Union[str, bytes, bytearray, memoryview]

#: Tests only: told of each secret's place in the buffer once the secret is copied in
#: ("made", the argument's name, the ctypes array: its bytes and NUL, sharing the buffer's
#: memory), so that a test can check that memory is zeros once the call returned.
_hook: Optional[Callable[[str, str, Any], None]] = None

_NOTHING = create_string_buffer(0)


class _Secrets:
    """The ctypes buffer of one call's secret arguments, and ``wipe``, which zeros it (see the
    module's docstring for the one shape of its use)."""

    __slots__ = ("wipe",)

    def __init__(self) -> None:
        # Called in a ``finally``: a C callable (no Python frame between it and the memset).
        self.wipe: Callable[[], Any] = partial(memset, _NOTHING, 0, 0)

    def pack(self, *named: Tuple[str, Any]) -> List[Any]:
        """Each ``(name, value)`` as NUL-terminated UTF-8 in the buffer: a ctypes ``char``
        array for each, in order, passed where the C function takes ``const char *``."""
        sources = [_source(name, value) for name, value in named]  # refused before any copy
        size = sum(len(source) + 1 for source in sources)
        buffer = create_string_buffer(size)  # zeros: the NUL after each secret
        self.wipe = partial(memset, buffer, 0, size)  # before the copies: wiped from here on
        bytes_view = memoryview(buffer).cast("B")
        args = []
        offset = 0
        for (name, _), source in zip(named, sources):
            n = len(source)
            bytes_view[offset : offset + n] = source
            arg = (c_char * (n + 1)).from_buffer(buffer, offset)  # a view: no copy
            args.append(arg)
            hook = _hook
            if hook is not None:
                hook("made", name, arg)
            offset += n + 1
        return args


def _source(name: str, value: Any) -> memoryview:
    """``value``'s UTF-8 bytes, read in place (a ``str`` is encoded); refused when not bytes
    or holding a NUL."""
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
    return source
