"""The library's result codes and the exception a failing call raises (re-exported by
``perps``)."""

from __future__ import annotations

from enum import IntEnum
from typing import Optional, Union


class Code(IntEnum):
    """libperps result codes (stable numbers, never reused)."""

    OK = 0
    INVALID_ARGUMENT = 1
    INVALID_KEY = 2
    INVALID_ORDER = 3
    VERIFICATION_FAILED = 4
    INVALID_STATE = 5
    TRANSPORT = 6
    TIMEOUT = 7
    HTTP_STATUS = 8
    API_ERROR = 9
    BAD_RESPONSE = 10
    TOKEN_EXPIRED = 11
    RNG = 12
    NOT_FOUND = 13  # the venue's HTTP 404 from an endpoint call: the order is gone (or not visible yet)
    RATE_LIMITED = 14  # refused by the client's rate limiter (option rate_limit); nothing sent
    STREAM_CLOSED = 15  # the stream was closed (Stream.close), or ended for good (next: after its "failed" event; a request: as soon as it is ending)
    STREAM_LIMIT = 16  # a new WebSocket would break the venue's connection limits; nothing sent
    PANIC = 99


class PerpsError(Exception):
    """One libperps failure.

    ``http_status`` is 0 and ``body`` None when the venue did not answer.
    ``may_have_reached_venue``: for an order, query the venue before sending it again
    (the library never retries).
    ``cl_ord_id``: the cl_ord_id of the order a failed ``new_order`` (of a client or a
    stream) was placing (yours, or the one the library generated): look it up with
    ``query_order`` before resending; for a failed :meth:`Stream.cancel_order`, the one its
    params named; for a ``request`` POST to ``/api/new_order``, the one its body names. None
    for other calls.
    ``x_request_id``: the ``x-request-id`` header sent with the failed request (body-signed
    requests), None when nothing was sent. Not the session's request key id
    (:attr:`Session.request_id`), nor the venue's ``request_id`` field.
    ``retry_after_ms``: how long to wait before asking again (the ``Retry-After`` of a 429 or
    503, or the client's rate limiter for ``RATE_LIMITED``), in milliseconds; -1 when unknown.
    A ``Retry-After`` too long to count in milliseconds gives ``2**63 - 1``: cap it before
    ``time.sleep``, which raises ``OverflowError`` on it.
    ``stream_request_id``: the envelope ``request_id`` of an order-stream request
    (:meth:`Stream.new_order`, :meth:`Stream.cancel_order`) whose frame may have been partly
    written when the write failed — the id its ``order_response`` events and the
    ``unanswered`` list of the next ``disconnected`` status event name; None for every other
    error. Not the ``x-request-id``.
    """

    code: Union[Code, int]
    message: str
    http_status: int
    body: Optional[str]
    may_have_reached_venue: bool
    cl_ord_id: Optional[str]
    x_request_id: Optional[str]
    retry_after_ms: int
    stream_request_id: Optional[str]

    def __init__(
        self,
        code: Union[Code, int],
        message: str,
        http_status: int = 0,
        body: Optional[str] = None,
        may_have_reached_venue: bool = False,
        cl_ord_id: Optional[str] = None,
        x_request_id: Optional[str] = None,
        retry_after_ms: int = -1,
        stream_request_id: Optional[str] = None,
    ) -> None:
        try:
            code = Code(code)
        except ValueError:  # a code newer than this binding: keep the number
            code = int(code)
        self.code = code
        self.message = message
        self.http_status = http_status
        self.body = body
        self.may_have_reached_venue = may_have_reached_venue
        self.cl_ord_id = cl_ord_id
        self.x_request_id = x_request_id
        self.retry_after_ms = retry_after_ms
        self.stream_request_id = stream_request_id
        name = code.name if isinstance(code, Code) else str(code)
        status = f" (HTTP {http_status})" if http_status else ""
        super().__init__(f"PERPS_{name}{status}: {message}")
