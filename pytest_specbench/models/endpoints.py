"""An endpoint URL as it may be written down: without the credentials it may carry.

``--model-base-url`` and ``--judge-model-base-url`` (and ``$OPENAI_BASE_URL``) may hold a
user name and password (``http://user:secret@host/v1``, sent by the HTTP client as basic
authentication) or a key in the query (``?api-key=...``).  Only the client sees the URL as
given; everything that is written or shown (cache entries and keys, the journal header, the
report's manifest, error messages, the terminal) gets :func:`redact_url`'s form.  The
redacted form keeps what tells endpoints apart (scheme, host, port, path, non-secret query
parameters), so cache keys of URLs without credentials are unchanged.
"""
from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Query parameter names whose values are secrets (api-key, access_token, sig, X-Amz-Signature, ...).
_SECRET_NAME = re.compile(r"key|token|secret|passw|pwd|sig|auth|credential|session", re.I)
REDACTED = "REDACTED"


def redact_url(url: str) -> str:
    """``url`` with its user info dropped and secret-looking query values replaced."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # not a URL we can take apart: show nothing of it
        return REDACTED
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED if _SECRET_NAME.search(k) else v) for k, v in pairs], safe="")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
