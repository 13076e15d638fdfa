"""The account holder's documented 400s a schema cannot say (loaded by schemathesis_hooks.py).

A model name is any string by the schema, because the names a request may give are the server's: its PV models and
the aliases its configuration adds (`modelAliases`), listed by GET /z1/models. A name it does not have is 400
INVALID_MODEL, dropped only when the name really is not among them for that operation (chat models for chat, the
Responses API and compaction; the embedding model for embeddings).

A key's own `rate_limits` above its account's tier, an `expires_at` not in the future, and a `budget` patched onto a key
without one that brings no `credits`, are 400 INVALID_PARAMETER naming the field: they depend on the account, the time
and the key. Dropped only when the request really asked for that.
"""

import datetime
import json
import os
import urllib.request

CREATE_KEY = ("POST", "/admin/accounts/{account_id}/keys")
UPDATE_KEY = ("PATCH", "/admin/keys/{key_id}")
EMBEDDINGS = ("POST", "/z1/embeddings")
MODEL_OPERATIONS = {("POST", "/z1/chat/completions"), ("POST", "/z1/responses"), ("POST", "/z1/responses/compact"), EMBEDDINGS}

_names = {}


def _model_names(kind):
    """The ids and aliases GET /z1/models lists for `kind` (chat or embedding), read once."""
    if kind not in _names:
        request = urllib.request.Request(
            os.environ["PVAI_URL"] + "/z1/models", headers={"Authorization": f"Bearer {os.environ['PVAI_API_KEY']}"}
        )
        with urllib.request.urlopen(request, timeout=10) as res:
            models = json.loads(res.read())["data"]
        for k in ("chat", "embedding"):
            _names[k] = {m["id"] for m in models if m.get("kind") == k}
    return _names[kind]


def model_refusal(operation, body, code):
    """Whether a request to `operation` earned 400 INVALID_MODEL: its model is not one the server has for it."""
    if code != "INVALID_MODEL" or operation not in MODEL_OPERATIONS or not isinstance(body, dict):
        return False
    return body.get("model") not in _model_names("embedding" if operation == EMBEDDINGS else "chat")


def key_limit_refusal(operation, body, code, details):
    """Whether a key's creation or change earned its 400: a rate limit past the tier's, an expiry not ahead, a
    metadata key empty or too long."""
    if code != "INVALID_PARAMETER" or operation not in (CREATE_KEY, UPDATE_KEY) or not isinstance(body, dict):
        return False
    field = details.get("field")
    if field in ("rate_limits.rpm", "rate_limits.rpd"):
        asked = (body.get("rate_limits") or {}).get(field.split(".")[1])
        return isinstance(asked, int) and isinstance(details.get("max"), int) and asked > details["max"]
    if field == "budget.credits":
        # A merge patch of `budget` onto a key without one must bring its credits (the schema cannot know the key).
        return isinstance(body.get("budget"), dict) and "credits" not in body["budget"]
    if field == "expires_at" and isinstance(body.get("expires_at"), str):
        try:
            at = datetime.datetime.fromisoformat(body["expires_at"].replace("Z", "+00:00"))
        except ValueError:
            return False
        if at.tzinfo is None:
            at = at.replace(tzinfo=datetime.timezone.utc)
        return at <= datetime.datetime.now(datetime.timezone.utc)
    if field == "metadata" and isinstance(body.get("metadata"), dict):
        # Metadata keys are 1 to 64 characters (said in words: OpenAPI 3.0 has no propertyNames).
        return any(not 1 <= len(key) <= 64 for key in body["metadata"])
    return False
