"""Schemathesis hooks for the pvai contract run (loaded by scripts/contract/schemathesis.sh).

Two documented 400s refuse requests that match the schema, because the rule they enforce spans what a JSON
schema can say: a `tool_choice` naming a function that is not in `tools` (a reference between two fields), and
a credit grant that would take the balance past the 10^12 ceiling (it depends on the balance already there).
positive_data_acceptance (ST202) reports both as "schema-valid request rejected". This hook drops exactly those
reports: only when the response is that documented refusal *and* the request really breaks that rule. Any other
400 to a schema-valid request, on these operations or elsewhere, still fails the run.

A document upload's `file` is any bytes by its schema; what they turn out to be (not one of the five formats,
empty, binary, corrupt, encrypted) is refused with the documented 415 or 400 codes. Those are dropped too,
except a 400 for a file that is readable UTF-8 text, which the server must accept. So is the 400 for a form
`metadata` that is not a JSON object (the schema can only say "string"), unless it was one.
"""

import json

import schemathesis

CHAT = ("POST", "/z1/chat/completions")
UPLOAD = ("POST", "/z1/rag/documents")
# A document upload's schema admits any bytes as `file`; the contract documents these refusals of what the
# bytes turn out to be (not one of the five formats, no text, not decodable, corrupt, encrypted).
CONTENT_REFUSALS = {"UNSUPPORTED_MEDIA_TYPE", "EMPTY_DOCUMENT", "DOCUMENT_UNREADABLE", "DOCUMENT_ENCRYPTED"}
ADD_CREDITS = ("POST", "/admin/accounts/{account_id}/credits")


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


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keep every failure except ST202 for the documented refusals (see the module's text)."""
    if (
        failure.code == "ST202"
        and (case.method.upper(), case.operation.path) == UPLOAD
        and response.status_code in (400, 415)
        and _code(response) in CONTENT_REFUSALS
        and isinstance(case.body, dict)
        and "file" in case.body
    ):
        # Refused for what the file holds: fine unless it was readable text (which must be accepted).
        return _is_readable_text(case.body.get("file")) and response.status_code == 400
    if (
        failure.code == "ST202"
        and (case.method.upper(), case.operation.path) == UPLOAD
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
    operation = (case.method.upper(), case.operation.path)
    if operation == CHAT and details.get("field") == "tool_choice.function.name":
        return not _names_an_absent_tool(case.body)
    if operation == ADD_CREDITS and details.get("field") == "amount" and "max_balance" in details:
        return not _passes_the_ceiling(case.body, details)
    return True
