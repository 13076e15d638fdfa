"""Schemathesis hooks for the Unicode edge-case run (`ST_UNICODE=1 test/contract/schemathesis.sh …`).

Every text field of every operation (JSON bodies at any depth, query and path parameters, form fields) is drawn
either as schemathesis generates it or with Unicode edge cases put into it: NUL and other C0/C1 controls, DEL,
unpaired surrogates (JSON bodies only: a URL or a form cannot carry them), zero-width and joiner characters, bidi
controls, line and paragraph separators, a BOM, noncharacters, U+FFFD, combining marks without a base,
characters outside the Basic Multilingual Plane (emoji with modifiers, tags, private use, U+10FFFF), and letters
whose case mapping changes length. One code point replaces one, so a value keeps the length its schema allows
(a path parameter, which reaches the hook percent-encoded, is decoded, edited and encoded again);
a value whose schema fixes its form (enum, const, format) or is no string (a boolean or a number of a query, held as
text) is left alone; an identifier (the contract's
identifier pattern) gets only the edge cases its pattern admits, and one that breaks the pattern (a case made
invalid on purpose) is left as it is. What the server must then do is what the
contract says: no 5xx, the documented status and body, and a 400 INVALID_TEXT only where the text earned it
(test/contract/schemathesis_hooks.py, loaded here too, keeps every other refusal of a schema-valid request a
failure).
"""

import os
import re
import sys
import urllib.parse

import schemathesis
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schemathesis_hooks  # noqa: E402,F401  (its filter_failure applies to this run too)

IDENTIFIER_PATTERN = "^[^\\u0000-\\u001F\\u007F]+$"
# As JSON Schema reads it: `$` is the end of the string (Python's would match before a final newline, too).
IDENTIFIER = re.compile(IDENTIFIER_PATTERN.removesuffix("$") + r"\Z")
CONTROLS = ["\x00", "\x01", "\x08", "\x0b", "\x17", "\x1b", "\x1f", "\x7f"]
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff"]
OTHERS = [
    "\x85", "\x9f", "\xa0", "\xad", "\u0300", "\u034f", "\u061c", "\u180e", "\u200b", "\u200c", "\u200d",
    "\u200e", "\u2028", "\u2029", "\u202e", "\u2066", "\u3000", "\ufeff", "\ufff9", "\ufffc", "\ufffd",
    "\ufffe", "\uffff", "\U0001f600", "\U0001f3fb", "\U000e0041", "\U0010fced", "\U0010ffff", "\U0001d518",
    "\u00df", "\u0130", "\u01c5", "\ufb03",
]
BODY_EDGES = CONTROLS + SURROGATES + OTHERS
URL_EDGES = CONTROLS + OTHERS
IDENTIFIER_EDGES = OTHERS
FIXED_FORM = ("enum", "const", "format")


def _resolve(root, ref):
    node = root
    for part in ref.lstrip("#/").split("/"):
        node = node.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(node, dict) else {}
    return node


def _concrete(schemas, root):
    """The schemas a value may match, with references followed and oneOf/anyOf/allOf flattened."""
    out, stack, seen = [], list(schemas), 0
    while stack and seen < 500:
        seen += 1
        schema = stack.pop()
        if not isinstance(schema, dict):
            continue
        if "$ref" in schema:
            stack.append(_resolve(root, schema["$ref"]))
            continue
        for key in ("oneOf", "anyOf", "allOf"):
            stack.extend(schema.get(key, []))
        out.append(schema)
    return out


def _string_edges(schemas, url):
    """Which edge cases a string under these schemas may take, or None when its form is fixed or it is no text (a
    boolean or a number of a query, which the URL carries as text: `stream=false`)."""
    strings = [s for s in schemas if s.get("type") == "string" or ("type" not in s and not s.get("properties"))]
    if schemas and not strings:
        return None
    if any(key in s for s in strings for key in FIXED_FORM):
        return None
    patterns = {s["pattern"] for s in strings if "pattern" in s}
    if patterns - {IDENTIFIER_PATTERN}:
        return None
    if patterns:
        return IDENTIFIER_EDGES
    return URL_EDGES if url else BODY_EDGES


def _text(value, edges):
    if not value or edges is None:
        return st.just(value)
    n = len(value)
    return st.one_of(
        st.just(value),
        st.tuples(st.integers(0, n - 1), st.sampled_from(edges)).map(lambda p: value[: p[0]] + p[1] + value[p[0] + 1 :]),
        st.sampled_from(edges).map(lambda edge: edge * n),
    )


def _children(schemas, key, root):
    found = []
    for schema in schemas:
        properties = schema.get("properties") or {}
        if key in properties:
            found.append(properties[key])
        elif isinstance(schema.get("additionalProperties"), dict):
            found.append(schema["additionalProperties"])
        elif schema.get("additionalProperties", True) is not False and not properties:
            found.append({})
    return _concrete(found, root)


def _value(value, schemas, root, url=False, encoded=False):
    """A strategy for `value` with edge cases in its free text, walking its schema beside it."""
    if isinstance(value, str):
        edges = _string_edges(schemas, url)
        # A path parameter reaches the hook percent-encoded: its characters are edited, not its escapes (one code
        # point for one, so it keeps the length its schema allows), then it is encoded again.
        text = urllib.parse.unquote(value) if encoded else value
        # An identifier that breaks its pattern is a case schemathesis made invalid on purpose (a control
        # character): replacing its code points could make it valid, and schemathesis would still expect the
        # refusal of an invalid one (a valid end user id is answered 200, not 404 as an unknown resource id is).
        if edges is IDENTIFIER_EDGES and not IDENTIFIER.search(text):
            return st.just(value)
        if not encoded:
            return _text(value, edges)
        return st.one_of(st.just(value), _text(text, edges).map(lambda v: urllib.parse.quote(v, safe="")))
    if isinstance(value, dict):
        keys = list(value)
        parts = [_value(value[k], _children(schemas, k, root), root, url) for k in keys]
        return st.tuples(*parts).map(lambda drawn: dict(zip(keys, drawn))) if parts else st.just(value)
    if isinstance(value, list):
        items = _concrete([s["items"] for s in schemas if isinstance(s.get("items"), dict)], root)
        parts = [_value(v, items, root, url) for v in value]
        return st.tuples(*parts).map(list) if parts else st.just(value)
    return st.just(value)


def _body_schemas(ctx, body):
    """The schemas `body` is drawn from, and whether it is a form: a multipart form's when the body has the form's
    required fields (a form, like a URL, cannot carry unpaired surrogates: they are for JSON bodies), else JSON's."""
    operation = ctx.operation
    content = ((operation.definition.raw or {}).get("requestBody") or {}).get("content") or {}
    root = operation.schema.raw_schema
    forms = {kind: media for kind, media in content.items() if kind.startswith("multipart/form-data")}
    for media in forms.values():
        required = {key for s in _concrete([media.get("schema", {})], root) for key in s.get("required", [])}
        if required and isinstance(body, dict) and required <= body.keys():
            return [media.get("schema", {})], root, True
    return [media.get("schema", {}) for kind, media in content.items() if kind not in forms], root, False


def _parameter_schemas(ctx, where):
    root = ctx.operation.schema.raw_schema
    out = {}
    for parameter in getattr(ctx.operation, where):
        definition = getattr(parameter, "definition", {}) or {}
        if "$ref" in definition:
            definition = _resolve(root, definition["$ref"])
        out[definition.get("name")] = definition.get("schema", {})
    return out, root


@schemathesis.hook
def flatmap_body(ctx, body):
    schemas, root, form = _body_schemas(ctx, body)
    return _value(body, _concrete(schemas, root), root, url=form)


def _parameters(ctx, values, where):
    """Query or path parameters, each walked with its own schema."""
    if not isinstance(values, dict) or not values:
        return st.just(values)
    schemas, root = _parameter_schemas(ctx, where)
    keys = list(values)
    encoded = where == "path_parameters"
    parts = [
        _value(values[k], _concrete([schemas.get(k, {"type": "string"})], root), root, url=True, encoded=encoded)
        for k in keys
    ]
    return st.tuples(*parts).map(lambda drawn: dict(zip(keys, drawn)))


@schemathesis.hook
def flatmap_query(ctx, query):
    return _parameters(ctx, query, "query")


@schemathesis.hook
def flatmap_path_parameters(ctx, params):
    return _parameters(ctx, params, "path_parameters")
