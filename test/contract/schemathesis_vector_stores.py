"""The rules of the Files and Vector Stores APIs that their schemas cannot say, for the schemathesis hooks
(test/contract/schemathesis_hooks.py): `_vector_store_refusal` tells whether a 400 of one of their operations names a
rule the request really breaks (createFile's refusals of what the bytes are, the document uploads' rule, are in the
hooks). The server's rules (src/files/, src/vector-stores/, src/kernel/attribute-filter.ts) said again: when one of them gains
a refusal, this module gains its rule, or the run fails on it.

- search: `rewrite_query: true` (pvai does not rewrite queries); `filters` that are not OpenAI's attribute filters
  (the rules of file_search's filters, `_filter_fault` of schemathesis_responses.py, passed in);
- static chunking (`chunking_strategy`, on a store, a file, a batch or one of a batch's `files`) without its
  `static` window, or with an overlap over half the chunk size;
- a batch naming neither `file_ids` nor `files`, or both;
- `attributes` with a key over 64 characters (the schema's words: it cannot bound the keys of a map).
"""

import re

SEARCH = ("POST", "/z1/vector_stores/{vector_store_id}/search")
CREATE_STORE = ("POST", "/z1/vector_stores")
ATTACH = ("POST", "/z1/vector_stores/{vector_store_id}/files")
UPDATE_FILE = ("POST", "/z1/vector_stores/{vector_store_id}/files/{file_id}")
BATCH = ("POST", "/z1/vector_stores/{vector_store_id}/file_batches")
OPERATIONS = {SEARCH, CREATE_STORE, ATTACH, UPDATE_FILE, BATCH}
MAX_ATTRIBUTE_KEY = 64


def _static_fault(strategy):
    """Whether a static chunking strategy is refused: without its `static` window, or overlapping over half of it."""
    if not isinstance(strategy, dict) or strategy.get("type") != "static":
        return False
    window = strategy.get("static")
    if not isinstance(window, dict):
        return True
    size, overlap = window.get("max_chunk_size_tokens"), window.get("chunk_overlap_tokens")
    return isinstance(size, int) and isinstance(overlap, int) and overlap * 2 > size


def _lookup(body, path):
    """The value at a field path as the server names it (`files[0].chunking_strategy`), or None."""
    value = body
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        if index:
            value = value[int(index)] if isinstance(value, list) and int(index) < len(value) else None
        else:
            value = value.get(name) if isinstance(value, dict) else None
    return value


def _vector_store_refusal(operation, body, code, details, filter_fault):
    """Whether a 400 of a Vector Stores operation names a rule its body really breaks (see the module's text)."""
    if code != "INVALID_PARAMETER" or not isinstance(body, dict):
        return False
    field = details.get("field") or ""
    if operation == SEARCH and field == "rewrite_query":
        return body.get("rewrite_query") is True
    if operation == SEARCH and field.startswith("filters"):
        return body.get("filters") is not None and filter_fault(body["filters"], "filters") == field
    match = re.fullmatch(r"(.*?)\.?chunking_strategy(\.static)?(\..+)?", field)
    if match:
        return _static_fault(_lookup(body, f"{match.group(1)}.chunking_strategy".lstrip(".")))
    if operation == BATCH and field in ("file_ids", "files"):
        return ("file_ids" in body) == ("files" in body)
    match = re.fullmatch(r"(.*?)\.?attributes(\..+)?", field)
    if match:
        attributes = _lookup(body, f"{match.group(1)}.attributes".lstrip("."))
        return isinstance(attributes, dict) and any(len(key) > MAX_ATTRIBUTE_KEY for key in attributes)
    return False
