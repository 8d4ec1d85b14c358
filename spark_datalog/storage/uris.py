"""Locations: local paths and object-store URIs, as Delta, Spark and pyarrow each want them."""

from __future__ import annotations

import os
import posixpath
from urllib.parse import unquote, urlparse

# Spark's Hadoop connectors use s3a://, delta-rs and pyarrow use s3://.
_SPARK_SCHEMES = {"s3": "s3a"}
_DELTA_SCHEMES = {"s3a": "s3", "s3n": "s3"}


def scheme(uri: str) -> str:
    """The URI scheme, ``""`` for a plain path (Windows drive letters count as plain paths)."""
    parsed = urlparse(uri)
    return parsed.scheme if len(parsed.scheme) > 1 else ""


def is_local(uri: str) -> bool:
    """True for a plain path or a ``file:`` URI."""
    return scheme(uri) in ("", "file")


def normalise(uri: str) -> str:
    """An absolute local path for local locations, the URI without trailing ``/`` otherwise."""
    uri = os.fspath(uri)
    if is_local(uri):
        path = unquote(urlparse(uri).path) if scheme(uri) == "file" else uri
        return os.path.abspath(os.path.expanduser(path))
    s = scheme(uri)
    uri = _DELTA_SCHEMES.get(s, s) + uri[len(s) :]
    return uri.rstrip("/")


def join(root: str, *parts: str) -> str:
    """``root/part/...`` with ``/`` separators for URIs and ``os.path.join`` for local paths."""
    if is_local(root):
        return os.path.join(root, *parts)
    return posixpath.join(root, *parts)


def for_spark(uri: str) -> str:
    """The location as Spark's Hadoop file systems spell it (``s3://`` becomes ``s3a://``)."""
    s = scheme(uri)
    if s in _SPARK_SCHEMES:
        return _SPARK_SCHEMES[s] + uri[len(s) :]
    return uri


def location_key(uri: str) -> str:
    """A spelling-independent key: ``file:///a/b``, ``file:/a/b`` and ``/a/b`` give the same key."""
    parsed = urlparse(uri)
    if len(parsed.scheme) <= 1 or parsed.scheme == "file":
        path = unquote(parsed.path) if parsed.scheme == "file" else uri
        return "/" + os.path.abspath(path).lstrip("/")
    return parsed.netloc + "/" + unquote(parsed.path).lstrip("/")


def filesystem(uri: str) -> tuple:
    """``(pyarrow FileSystem, path)`` for listing and stat-ing files at ``uri``."""
    from pyarrow import fs

    if is_local(uri):
        return fs.LocalFileSystem(), normalise(uri)
    return fs.FileSystem.from_uri(uri)
