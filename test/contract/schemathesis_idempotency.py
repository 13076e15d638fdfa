"""Idempotency-Key in the contract run: every POST documents the header, so schemathesis sends generated keys.

Generated keys repeat ("0", "!", ...) across requests that differ, and the same key with another request is the
documented 422 IDEMPOTENCY_KEY_REUSED. `before_call` notes every request sent with each key; the 422 is dropped
(`reused_key`) only when its key really was sent before with another request. A 422 for a fresh key, or for a key
only ever sent with this very request, stays a failure.
"""

import json

import schemathesis

# Idempotency-Key -> every request it was sent with, in order.
_SENT_WITH = {}


def _request(case):
    body = case.body.hex() if isinstance(case.body, (bytes, bytearray)) else case.body
    return json.dumps(
        [case.method.upper(), case.formatted_path, case.query, body, case.media_type],
        sort_keys=True,
        default=repr,
    )


def _key(case):
    headers = case.headers or {}
    return next((value for name, value in headers.items() if name.lower() == "idempotency-key"), None)


@schemathesis.hook
def before_call(context, case, kwargs):
    key = _key(case)
    if key is not None:
        _SENT_WITH.setdefault(key, []).append(_request(case))


def reused_key(case, response):
    """Whether `response` is the documented 422 for a key this run really sent before with another request."""
    if response.status_code != 422:
        return False
    try:
        code = json.loads(response.content).get("code")
    except (ValueError, AttributeError):
        return False
    sent = _SENT_WITH.get(_key(case)) or []
    return code == "IDEMPOTENCY_KEY_REUSED" and any(earlier != sent[-1] for earlier in sent[:-1])

