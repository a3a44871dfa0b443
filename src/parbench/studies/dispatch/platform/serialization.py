"""Functions, arguments and results travel as cloudpickle bytes, and over HTTP as
base64 text (the seed's format). Every size is checked against a limit before anything
is decoded further, so an oversized payload is refused without being unpickled.

Nothing here is ever unpickled by the gateway: only the processes that run a task
deserialize its function and arguments (see `executor`).
"""

from __future__ import annotations

import base64
import binascii

import cloudpickle

# Defaults; the platform's config passes its own.
DEFAULT_MAX_PAYLOAD_BYTES = 1 << 20


class PayloadError(ValueError):
    """A payload that cannot be accepted; the message says why."""


class PayloadTooLarge(PayloadError):
    """A payload over the size limit."""


def serialize(obj) -> bytes:
    """An object (a function, the (args, kwargs) of a call, a result) as cloudpickle bytes."""
    return cloudpickle.dumps(obj)


def deserialize(data: bytes):
    return cloudpickle.loads(data)


def encode(data: bytes) -> str:
    """Bytes as the base64 text the HTTP API carries."""
    return base64.b64encode(data).decode("ascii")


def serialize_text(obj) -> str:
    return encode(serialize(obj))


def serialize_call(*args, **kwargs) -> str:
    """The payload of POST /execute_function: the serialized (args, kwargs)."""
    return serialize_text((args, kwargs))


def decode(text, what: str, limit: int = DEFAULT_MAX_PAYLOAD_BYTES) -> bytes:
    """Base64 text from a request as bytes: refuses a non-string, bad base64, an empty
    payload and one over `limit` decoded bytes (checked on the text's length first)."""
    if not isinstance(text, str):
        raise PayloadError(f"{what} must be a base64 string, got {type(text).__name__}")
    if len(text) > 4 * ((limit + 2) // 3) + 4:
        raise PayloadTooLarge(f"{what} is larger than the limit of {limit} bytes")
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise PayloadError(f"{what} is not valid base64") from None
    if not data:
        raise PayloadError(f"{what} is empty")
    if len(data) > limit:
        raise PayloadTooLarge(f"{what} is {len(data)} bytes, larger than the limit of {limit} bytes")
    return data


def call_arguments(data: bytes) -> tuple[tuple, dict]:
    """(args, kwargs) from a task's payload; a ValueError says what is wrong with it."""
    value = deserialize(data)
    if (not isinstance(value, tuple) or len(value) != 2 or not isinstance(value[0], (tuple, list))
            or not isinstance(value[1], dict)):
        raise ValueError("the payload must be the serialized pair (args, kwargs)")
    return tuple(value[0]), value[1]
