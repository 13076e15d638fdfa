"""Idempotency-Key in the contract run: every POST documents the header, so schemathesis sends generated keys.

Generated keys repeat ("0", "!", ...) across requests that differ, and the same key with another request is the
documented 422 IDEMPOTENCY_KEY_REUSED. `after_call` notes every request sent with each key as it went on the wire
(schemathesis may put other bytes in a form's file than the case shows); the 422 is dropped (`reused_key`) only when
its key really was sent before with another request: another method, URL or body (a JSON body as parsed, a form's
bytes without its boundary). A 422 for a fresh key, or for a key only ever sent with this very request, stays a failure.
"""

import json
import re

import schemathesis

# Idempotency-Key -> every request it was sent with, in order.
_SENT_WITH = {}


def _sent(request):
    """The request as the server compares it."""
    body = request.body or b""
    if isinstance(body, str):
        body = body.encode("utf-8", "surrogatepass")
    content_type = request.headers.get("Content-Type", "")
    boundary = re.search(r'boundary="?([^";]+)', content_type)
    if boundary:
        body = body.replace(boundary.group(1).encode(), b"BOUNDARY")
    elif content_type.startswith("application/json"):
        try:
            body = json.dumps(json.loads(body), sort_keys=True).encode()
        except ValueError:
            pass
    return (request.method, request.url, content_type.split(";")[0].strip().lower(), body)


def _key(headers):
    return next((value for name, value in (headers or {}).items() if name.lower() == "idempotency-key"), None)


@schemathesis.hook
def after_call(context, case, response):
    key = _key(response.request.headers)
    if key is not None:
        _SENT_WITH.setdefault(key, []).append(_sent(response.request))


def reused_key(case, response):
    """Whether `response` is the documented 422 for a key this run really sent before with another request."""
    if response.status_code != 422:
        return False
    try:
        code = json.loads(response.content).get("code")
    except (ValueError, AttributeError):
        return False
    sent = _SENT_WITH.get(_key(response.request.headers)) or []
    return code == "IDEMPOTENCY_KEY_REUSED" and any(earlier != sent[-1] for earlier in sent[:-1])
