"""Schemathesis hooks for the pvai contract run (loaded by test/contract/schemathesis.sh).

positive_data_acceptance (ST202) reports a documented 400 to a request that matches the schema as "schema-valid
request rejected" when the rule spans what a JSON schema can say: a `tool_choice` naming a function not in `tools`, a
credit grant past the 10^12 ceiling. This hook drops exactly those reports, only when the response is that documented
refusal *and* the request really breaks that rule; any other 400 to a schema-valid request still fails the run.

More rules the contract states in words: a string holding U+0000 or an unpaired surrogate is refused with 400
INVALID_TEXT (every operation, http/text.ts), a JSON body with a `__proto__` key with 400 INVALID_JSON, a document whose content is only whitespace with 400 EMPTY_DOCUMENT,
a chat content part the models cannot read (image_url, input_audio, file) with 400 UNSUPPORTED_CONTENT, and a chat
request naming no end user (neither user_id nor user) with 400 on user_id. Those refusals are dropped too, only
when the request really breaks the rule; refused otherwise, the failure stands.

A document upload's `file` is any bytes by its schema; what they turn out to be (not one of the five formats,
empty, binary, corrupt, encrypted) is refused with the documented 415 or 400 codes. Those are dropped too,
except a 400 for a file that is readable UTF-8 text, which the server must accept. So is the 400 for a form
`metadata` that is not a JSON object (the schema can only say "string"), unless it was one.

POST /z1/embeddings has three documented 400s a schema cannot say: token ids (lists of integers, in the schema
only so that the refusal can say to send text) are UNSUPPORTED_CONTENT; `dimensions` other than the model's own
(which the schema cannot know: it is the embedding engine's) is INVALID_PARAMETER on `dimensions`; a text past the
model's window in tokens is INVALID_PARAMETER naming it. Those are dropped only when the request really did that:
token ids were sent, the `dimensions` sent differs from the one the answer names, the text named is longer in
characters than the window in tokens (a token of all-MiniLM-L6-v2 covers at least one character, so a shorter text
cannot pass it).

POST /z1/responses (the Responses API) has the refusals its schema and descriptions state in words, each a 400 naming
the field: `include` asking for `message.output_text.logprobs`; a tool of a type pvai does not run, a function tool
without a name or named `code_interpreter` beside the code_interpreter tool, `file_search` filters that are not
OpenAI's attribute filters, a `json_schema` text format without its schema; a `tool_choice` naming a function or a
built-in tool that is not in `tools`, or a type that is no tool, or `required` (or a tool named) with no tools at all;
input items that are not a turn (a message without its role or content, a text part without its text, a
function_call without call_id and name, a function_call_output without a call_id answering a function_call before it,
an item with neither type nor role, an item_reference naming no stored item of the end user, a compaction pvai did not
make, an item the conversation already holds) and content parts the models cannot read (UNSUPPORTED_CONTENT);
`conversation` with `previous_response_id`; `background` without `store`. POST /z1/responses/compact reads its input
items by the same rules and refuses a conversation of nothing (no previous_response_id, no turn in `input`). The
Conversations API's items (POST /z1/conversations, …/{id}/items) are read so too, images kept in a user message, and
an item id the conversation already holds, or given twice, is refused. Each is dropped only when the request really
breaks the rule the field names (`_responses_refusal`, `_compact_refusal` and `_conversation_refusal` in
schemathesis_responses.py, the server's rules said again; a conversation's items, which only the server knows, are
read from it); any other 400 stays a failure. A chat's `tool_choice: required` with no tools is refused as responses'.

The Files and Vector Stores APIs' documented 400s: schemathesis_vector_stores.py; the account holder's (model names,
a key's limits): schemathesis_accounts.py; a generated Idempotency-Key sent again with another request (the 422):
schemathesis_idempotency.py. A response not created in the background can neither be streamed again
(400 naming `stream`) nor cancelled (400 naming `response_id`): dropped only when the server says so.
"""

import importlib.util
import json
import os
import re
import sys
import urllib.parse
import urllib.request

import schemathesis

# The Responses API's rules, in the module beside this file, loaded as this file was: schemathesis loads its hooks
# file by path, outside sys.modules; schemathesis_unicode.py imports it (its directory on sys.path). Hypothesis draws
# constants for the cases it generates from the local modules in sys.modules, so the rules must be in sys.modules
# exactly when this file is, or each run would generate other cases than it did before they were split off.
sys.dont_write_bytecode = True  # no __pycache__ in test/contract/
if __name__ in sys.modules:
    from schemathesis_responses import _compact_refusal, _conversation_refusal, _filter_fault, _responses_refusal
    from schemathesis_vector_stores import OPERATIONS as VECTOR_STORES, _vector_store_refusal
    from schemathesis_accounts import key_limit_refusal, model_refusal
    from schemathesis_idempotency import reused_key
else:

    def _load(name):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
        spec = importlib.util.spec_from_file_location(f"_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    _rules = _load("schemathesis_responses")
    _responses_refusal, _compact_refusal = _rules._responses_refusal, _rules._compact_refusal
    _conversation_refusal, _filter_fault = _rules._conversation_refusal, _rules._filter_fault
    _stores = _load("schemathesis_vector_stores")
    _vector_store_refusal, VECTOR_STORES = _stores._vector_store_refusal, _stores.OPERATIONS
    _accounts = _load("schemathesis_accounts")
    key_limit_refusal, model_refusal = _accounts.key_limit_refusal, _accounts.model_refusal
    reused_key = _load("schemathesis_idempotency").reused_key

CHAT = ("POST", "/z1/chat/completions")
UPLOAD = ("POST", "/z1/rag/documents")
FILE_UPLOAD = ("POST", "/z1/files")  # OpenAI's Files API: the same formats, the same refusals of what the bytes are
# A document upload's schema admits any bytes as `file`; the contract documents these refusals of what the
# bytes turn out to be (not one of the five formats, no text, not decodable, corrupt, encrypted).
CONTENT_REFUSALS = {"UNSUPPORTED_MEDIA_TYPE", "EMPTY_DOCUMENT", "DOCUMENT_UNREADABLE", "DOCUMENT_ENCRYPTED"}
ADD_CREDITS = ("POST", "/admin/accounts/{account_id}/credits")
EMBEDDINGS = ("POST", "/z1/embeddings")
RESPONSES = ("POST", "/z1/responses")
COMPACT = ("POST", "/z1/responses/compact")
CONVERSATIONS = ("POST", "/z1/conversations")
CONVERSATION_ITEMS = ("POST", "/z1/conversations/{conversation_id}/items")
GET_RESPONSE = ("GET", "/z1/responses/{response_id}")
CANCEL = ("POST", "/z1/responses/{response_id}/cancel")


def _server_json(path):
    """GET `path` (already encoded) of the server under test with the account's key: its JSON, or None."""
    request = urllib.request.Request(
        os.environ["PVAI_URL"] + path, headers={"Authorization": f"Bearer {os.environ['PVAI_API_KEY']}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as res:
            return json.loads(res.read())
    except (OSError, ValueError):
        return None


def _held_items(conversation_id):
    """The items of a conversation of the account, as the server lists them (none when it does not exist)."""
    if not isinstance(conversation_id, str):
        return []
    items, after = [], None
    while True:
        query = "order=asc&limit=100" + (f"&after={urllib.parse.quote(after, safe='')}" if after else "")
        page = _server_json(f"/z1/conversations/{urllib.parse.quote(conversation_id, safe='')}/items?{query}")
        if not isinstance(page, dict) or not isinstance(page.get("data"), list):
            return items
        items.extend(page["data"])
        if not page.get("has_more") or not page.get("last_id"):
            return items
        after = page["last_id"]


def _body_refusal(case, code, details):
    """Whether a 400 of a Responses or Conversations operation names a rule its body really breaks."""
    operation = (case.method.upper(), case.operation.path)
    if operation == RESPONSES:
        conversation = case.body.get("conversation")
        named = conversation.get("id") if isinstance(conversation, dict) else conversation
        return _responses_refusal(case.body, code, details, _held_items(named))
    if operation == COMPACT:
        return _compact_refusal(case.body, code, details)
    held = []
    if operation == CONVERSATION_ITEMS:  # path parameters are held percent-encoded
        held = _held_items(urllib.parse.unquote(case.path_parameters["conversation_id"]))
    return _conversation_refusal(case.body, code, details, held)


def _not_background(case, details):
    """Whether a 400 refusing to stream a response again or to cancel it names one that the server keeps as not
    created in the background."""
    if (case.method.upper(), case.operation.path) == GET_RESPONSE:
        if details.get("field") != "stream" or (case.query or {}).get("stream") not in (True, "true"):
            return False
    elif details.get("field") != "response_id":
        return False
    stored = _server_json(f"/z1/responses/{case.path_parameters['response_id']}")
    return isinstance(stored, dict) and stored.get("background") is False


def _error(response):
    try:
        body = json.loads(response.content)
    except ValueError:
        return None, {}
    if not isinstance(body, dict) or body.get("code") != "INVALID_PARAMETER":
        return None, {}
    details = body.get("details")
    return body, details if isinstance(details, dict) else {}


def _names_an_absent_tool(request):
    choice = request.get("tool_choice")
    if not isinstance(choice, dict):
        return False
    name = choice.get("function", {}).get("name")
    tools = request.get("tools") or []
    return all(tool.get("function", {}).get("name") != name for tool in tools)


def _passes_the_ceiling(request, details):
    amount, balance, ceiling = request.get("amount"), details.get("balance"), details.get("max_balance")
    return all(isinstance(v, int) for v in (amount, balance, ceiling)) and balance + amount > ceiling


def _code(response):
    try:
        body = json.loads(response.content)
    except ValueError:
        return None
    return body.get("code") if isinstance(body, dict) else None


def _is_readable_text(data):
    """Whether an uploaded file is non-empty UTF-8 text without NUL bytes (which the server must accept)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, (bytes, bytearray)) or b"\x00" in data:
        return False
    try:
        return data.decode("utf-8").strip() != ""
    except UnicodeDecodeError:
        return False


def _is_json_object(text):
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return False
    try:
        return isinstance(json.loads(text), dict)
    except (TypeError, ValueError):
        return False


# What JavaScript's String.prototype.trim() removes (the server's test for "no text"), which Python's str.strip()
# does not quite match (U+FEFF is whitespace to one and not the other).
_JS_WHITESPACE = set("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                     "\u2028\u2029\u202f\u205f\u3000\ufeff")


def _refused_text(value):
    """Whether a string holds what the server takes in no text: U+0000, or an unpaired surrogate."""
    return isinstance(value, str) and ("\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value))


def _strings(value):
    """Every string in a generated value, object keys included."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _documented_text_refusal(case, response):
    """A 400 INVALID_TEXT or EMPTY_DOCUMENT that the generated request really earned (the rules of http/text.ts
    apply to every string of the request, so any string breaking one earns the refusal; which field the answer
    names is the test suite's to check, test/http/text-at-the-door.test.ts)."""
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    if not isinstance(body, dict) or response.status_code != 400:
        return False
    details = body.get("details") if isinstance(body.get("details"), dict) else {}
    if body.get("code") == "INVALID_TEXT":
        # Path parameters are held percent-encoded, as they go on the wire.
        path = [urllib.parse.unquote(s) for s in _strings(case.path_parameters)]
        strings = [s for part in (case.body, case.query) for s in _strings(part)] + path
        if "control characters" in details.get("reason", ""):
            return any(any(ord(c) < 0x20 or ord(c) == 0x7F for c in s) for s in strings)
        return any(_refused_text(s) for s in strings)
    if body.get("code") == "UNSUPPORTED_CONTENT" and (case.method.upper(), case.operation.path) == CHAT:
        # A content part the models cannot read (image_url, input_audio, file) is refused, as documented.
        parts = [
            part
            for message in (case.body.get("messages") or [] if isinstance(case.body, dict) else [])
            if isinstance(message, dict) and isinstance(message.get("content"), list)
            for part in message["content"]
        ]
        return any(isinstance(p, dict) and p.get("type") in ("image_url", "input_audio", "file") for p in parts)
    if body.get("code") == "EMPTY_DOCUMENT" and (case.method.upper(), case.operation.path) == UPLOAD:
        content = case.body.get("content") if isinstance(case.body, dict) else None
        return isinstance(content, str) and all(c in _JS_WHITESPACE for c in content)
    return False


def _embedding_refusal(case, response):
    """A documented 400 of POST /z1/embeddings that the generated request really earned (see the module's text)."""
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    if not isinstance(body, dict) or response.status_code != 400 or not isinstance(case.body, dict):
        return False
    details = body.get("details") if isinstance(body.get("details"), dict) else {}
    field = details.get("field", "")
    inputs = case.body.get("input")
    texts = [inputs] if isinstance(inputs, str) else inputs if isinstance(inputs, list) else []
    if body.get("code") == "UNSUPPORTED_CONTENT" and field == "input":
        return isinstance(inputs, list) and any(not isinstance(item, str) for item in inputs)
    if body.get("code") != "INVALID_PARAMETER":
        return False
    if field == "dimensions":
        return case.body.get("dimensions") not in (None, details.get("dimensions"))
    match = re.fullmatch(r"input(?:\[(\d+)\])?", field)
    if match and isinstance(details.get("tokens"), int) and isinstance(details.get("max_tokens"), int):
        index = int(match.group(1) or 0)
        text = texts[index] if index < len(texts) else None
        return isinstance(text, str) and details["tokens"] > details["max_tokens"] and len(text) > details["max_tokens"]
    return False


def _has_proto_key(value):
    """Whether a JSON value has an object key `__proto__` at any depth."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "__proto__" in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return False


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keep every failure except ST202 for the documented refusals (see the module's text)."""
    if failure.code == "ST202" and (_documented_text_refusal(case, response) or reused_key(case, response)):
        return False
    if failure.code == "ST202" and _code(response) == "INVALID_JSON" and _has_proto_key(case.body):
        # A body with a `__proto__` key is refused (documented: protection against prototype poisoning).
        return False
    operation = (case.method.upper(), case.operation.path)
    if failure.code == "ST202" and response.status_code == 400 and (
        model_refusal(operation, case.body, _code(response))
        or key_limit_refusal(operation, case.body, _code(response), _error(response)[1])
    ):
        return False  # a model the server lacks; a key's limit past its tier, or expiry not ahead
    if (
        failure.code == "ST202"
        and operation in (RESPONSES, COMPACT, CONVERSATIONS, CONVERSATION_ITEMS)
        and response.status_code == 400
        and isinstance(case.body, dict)
    ):
        # Dropped when the request really earned the documented refusal; any other 400 stays a failure.
        try:
            error = json.loads(response.content)
        except ValueError:
            return True
        if not isinstance(error, dict):
            return True
        details = error.get("details") if isinstance(error.get("details"), dict) else {}
        return not _body_refusal(case, error.get("code"), details)
    if failure.code == "ST202" and operation in (GET_RESPONSE, CANCEL) and response.status_code == 400:
        body, details = _error(response)
        return body is None or not _not_background(case, details)
    if failure.code == "ST202" and operation in VECTOR_STORES and response.status_code == 400:
        # The Vector Stores API's documented refusals (schemathesis_vector_stores.py), when the request earned one.
        body, details = _error(response)
        return body is None or not _vector_store_refusal(operation, case.body, body["code"], details, _filter_fault)
    if failure.code == "ST202" and operation == EMBEDDINGS:
        # Dropped when the request really earned the documented refusal; any other 400 stays a failure.
        return not _embedding_refusal(case, response)
    if (
        failure.code == "ST202"
        and operation in (UPLOAD, FILE_UPLOAD)
        and response.status_code in (400, 415)
        and _code(response) in CONTENT_REFUSALS
        and isinstance(case.body, dict)
        and "file" in case.body
    ):
        # Refused for what the file holds: fine unless it was readable text (which must be accepted).
        return _is_readable_text(case.body.get("file")) and response.status_code == 400
    if (
        failure.code == "ST202"
        and operation == UPLOAD
        and response.status_code == 400
        and isinstance(case.body, dict)
        and _error(response)[1].get("field") == "metadata"
    ):
        # The form's metadata is text that must hold a JSON object (documented); keep the failure if it did.
        return _is_json_object(case.body.get("metadata"))
    if failure.code != "ST202" or response.status_code != 400 or not isinstance(case.body, dict):
        return True
    body, details = _error(response)
    if body is None:
        return True
    if operation == CHAT and details.get("field") == "user_id" and details.get("reason") == "is required":
        # The end user is `user_id` or, when it is absent, OpenAI's `user` (documented): neither is a 400.
        return "user_id" in case.body or "user" in case.body
    if operation == CHAT and re.fullmatch(r"messages\[\d+\]\.content\[\d+\]\.text", details.get("field", "")):
        # A text part must carry its text: the one rule of a content part the schema cannot say (OpenAPI 3.0).
        return not any(
            isinstance(part, dict) and part.get("type") == "text" and not isinstance(part.get("text"), str)
            for message in case.body.get("messages") or []
            if isinstance(message, dict) and isinstance(message.get("content"), list)
            for part in message["content"]
        )
    if operation == CHAT and details.get("field") == "tool_choice.function.name":
        return not _names_an_absent_tool(case.body)
    if operation == CHAT and details.get("field") == "tool_choice" and details.get("reason") == "needs tools":
        # A call the model must make, with nothing to call (docs/responses-conformance.md: refused as OpenAI does).
        return not (case.body.get("tool_choice") == "required" and not case.body.get("tools"))
    if operation == ADD_CREDITS and details.get("field") == "amount" and "max_balance" in details:
        return not _passes_the_ceiling(case.body, details)
    return True
