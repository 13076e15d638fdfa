"""The rules of POST /z1/responses that its schema cannot say, for the schemathesis hooks
(scripts/contract/schemathesis_hooks.py, whose module text lists them): `_responses_refusal` tells whether a 400 of
that operation names a rule the request really breaks. The server's rules (src/responses/request.ts, input.ts,
src/kernel/attribute-filter.ts) said again: when src/responses/ gains a refusal, this module gains its rule.
"""

import re

# src/responses/: the content parts read as text, the items of an earlier output that add no turn, the tool types
# pvai runs, the roles of a message, and the comparisons of an attribute filter (src/kernel/attribute-filter.ts).
_TEXT_PARTS = {"input_text", "output_text", "text"}
_WEB_SEARCH = {"web_search", "web_search_preview", "web_search_preview_2025_03_11", "web_search_2025_08_26"}
_TOOL_TYPES = {"function", "file_search", "code_interpreter"} | _WEB_SEARCH
_ROLES = {"user", "assistant", "system", "developer"}
_COMPARISONS = {"eq", "ne", "gt", "gte", "lt", "lte"}
_FILTER_DEPTH = 8


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _filter_fault(value, field, depth=0):
    """The field an attribute filter is refused at (readAttributeFilter's rules), or None when it is a filter."""
    if not isinstance(value, dict):
        return field
    kind = value.get("type")
    if kind in ("and", "or"):
        if depth >= _FILTER_DEPTH:
            return field
        inner = value.get("filters")
        if not isinstance(inner, list) or not inner:
            return f"{field}.filters"
        for i, f in enumerate(inner):
            fault = _filter_fault(f, f"{field}.filters[{i}]", depth + 1)
            if fault:
                return fault
        return None
    if not isinstance(value.get("key"), str) or value.get("key") == "":
        return f"{field}.key"
    if kind in ("in", "nin"):
        items = value.get("value")
        ok = isinstance(items, list) and all(isinstance(v, str) or _is_number(v) for v in items)
        return None if ok else f"{field}.value"
    if kind not in _COMPARISONS:
        return f"{field}.type"
    v = value.get("value")
    return None if isinstance(v, (str, bool)) or _is_number(v) else f"{field}.value"


def _unreadable_part(parts, index):
    """Whether part `index` of a list of content parts is one the models cannot read (UNSUPPORTED_CONTENT)."""
    if not isinstance(parts, list) or index >= len(parts) or not isinstance(parts[index], dict):
        return False
    part = parts[index]
    return part.get("type") not in _TEXT_PARTS and not (
        part.get("type") == "refusal" and isinstance(part.get("refusal"), str)
    )


def _textless_part(parts, index):
    """Whether part `index` is a text part without its text."""
    if not isinstance(parts, list) or index >= len(parts) or not isinstance(parts[index], dict):
        return False
    return parts[index].get("type") in _TEXT_PARTS and not isinstance(parts[index].get("text"), str)


def _input_item_refusal(item, rest, code):
    """Whether input item `item` breaks the rule named by the rest of the field (after `input[i]`)."""
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    if kind == "item_reference" or (kind is None and item.get("role") is None and isinstance(item.get("id"), str)):
        # An item_reference (or an item that is nothing but an id) names an item among the end user's stored
        # items, which a generated id never is.
        return code == "INVALID_PARAMETER" and rest == ".id"
    kind = kind or ("message" if item.get("role") else None)
    parts = re.fullmatch(r"\.(content|output)\[(\d+)\](\.text)?", rest)
    if parts:
        # A message's content parts, or a function_call_output's output parts (read the same way).
        container = "message" if parts.group(1) == "content" else "function_call_output"
        if kind != container:
            return False
        if code == "UNSUPPORTED_CONTENT":
            return not parts.group(3) and _unreadable_part(item.get(parts.group(1)), int(parts.group(2)))
        return bool(parts.group(3)) and _textless_part(item.get(parts.group(1)), int(parts.group(2)))
    if code != "INVALID_PARAMETER":
        return False
    if rest == "":
        named = isinstance(item.get("call_id"), str) and isinstance(item.get("name"), str)
        return kind == "function_call" and not named
    if rest == ".call_id":
        return kind == "function_call_output" and not isinstance(item.get("call_id"), str)
    if rest == ".output":
        return kind == "function_call_output" and not isinstance(item.get("output"), (str, list))
    if rest == ".type":
        return kind is None
    if kind != "message":
        return False
    if rest == ".role":
        return item.get("role") not in _ROLES
    if rest == ".content":
        return not isinstance(item.get("content"), (str, list))
    return False


def _responses_refusal(body, code, details):
    """Whether a 400 of POST /z1/responses names a rule the request really breaks (see schemathesis_hooks.py)."""
    field = details.get("field", "")
    inputs = body.get("input")
    items = inputs if isinstance(inputs, list) else []
    match = re.fullmatch(r"input\[(\d+)\](.*)", field)
    if match:
        index = int(match.group(1))
        return index < len(items) and _input_item_refusal(items[index], match.group(2), code)
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    match = re.fullmatch(r"tools\[(\d+)\]\.max_num_results", field)
    if code == "RAG_K_EXCEEDS_TIER" and match:
        # file_search's results past the tier's rag_k (not on the contract server's enterprise account).
        index = int(match.group(1))
        wanted = tools[index].get("max_num_results") if index < len(tools) else None
        return _is_number(wanted) and _is_number(details.get("max")) and wanted > details["max"]
    if code != "INVALID_PARAMETER":
        return False
    if field == "user_id":
        return all(body.get(key) is None for key in ("user_id", "user", "safety_identifier"))
    if field == "include":
        return "message.output_text.logprobs" in (body.get("include") or [])
    match = re.fullmatch(r"tools\[(\d+)\]\.(name|type|filters.*)", field)
    if match:
        index = int(match.group(1))
        if index >= len(tools):
            return False
        tool = tools[index]
        if match.group(2) == "type":
            return tool.get("type") not in _TOOL_TYPES
        if match.group(2) == "name":
            if tool.get("type") != "function":
                return False
            name = tool.get("name")
            clash = name == "code_interpreter" and any(t.get("type") == "code_interpreter" for t in tools)
            return not name or clash
        if tool.get("type") in _WEB_SEARCH:
            # web_search's filters are OpenAI's allowed_domains: a list of domain names.
            filters = tool.get("filters")
            domains = filters.get("allowed_domains") if isinstance(filters, dict) else None
            return field == f"tools[{index}].filters.allowed_domains" and domains is not None and not (
                isinstance(domains, list) and all(isinstance(d, str) for d in domains)
            )
        return (
            tool.get("type") == "file_search"
            and tool.get("filters") is not None
            and _filter_fault(tool["filters"], f"tools[{index}].filters") == field
        )
    text_format = (body.get("text") or {}).get("format") or {}
    if field == "text.format.schema":
        return text_format.get("type") == "json_schema" and text_format.get("schema") is None
    choice = body.get("tool_choice")
    if field.startswith("tool_choice") and isinstance(choice, dict):
        functions = {t.get("name") for t in tools if t.get("type") == "function"}
        types = {t.get("type") for t in tools}
        kind, name = choice.get("type"), choice.get("name")
        if field == "tool_choice.name":
            return kind == "function" and (name is None or name not in functions)
        if field == "tool_choice.type":
            if kind == "function":
                return False  # a function choice without its name is refused on tool_choice.name
            if kind == "code_interpreter":
                return "code_interpreter" not in types
            if kind == "file_search":
                return "file_search" not in types
            if isinstance(kind, str) and kind.startswith("web_search"):
                return not any(isinstance(t, str) and t.startswith("web_search") for t in types)
            return True
    return False
