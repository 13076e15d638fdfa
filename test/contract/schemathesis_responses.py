"""The rules of the Responses API that its schema cannot say, for the schemathesis hooks
(test/contract/schemathesis_hooks.py, whose module text lists them): `_responses_refusal`, `_compact_refusal` and
`_conversation_refusal` tell whether a 400 of POST /z1/responses, POST /z1/responses/compact, or POST /z1/conversations
and …/items names a rule the request really breaks. The server's rules (src/responses/request.ts, prepare.ts,
compact.ts, input.ts, input-content.ts, compaction-item.ts, src/conversations/items.ts, src/kernel/attribute-filter.ts)
said again: when one of them gains a refusal, this module gains its rule. What only the server knows (the items a
conversation holds) the hook reads from it and passes in.
"""

import base64
import json
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


def _unreadable_part(parts, index, images=False):
    """Whether part `index` of a list of content parts is one the models cannot read (UNSUPPORTED_CONTENT). With
    `images` (a user message of a conversation, which keeps images for the model a response will name), an
    input_image is read unless it names its image by file_id instead of image_url."""
    if not isinstance(parts, list) or index >= len(parts) or not isinstance(parts[index], dict):
        return False
    part = parts[index]
    if images and part.get("type") == "input_image":
        return not _has_image_url(part) and isinstance(part.get("file_id"), str)
    return part.get("type") not in _TEXT_PARTS and not (
        part.get("type") == "refusal" and isinstance(part.get("refusal"), str)
    )


def _has_image_url(part):
    return isinstance(part.get("image_url"), str) and part["image_url"] != ""


def _summary(content):
    """The summary a compaction item's encrypted_content holds (compaction-item.ts), or None when pvai did not write
    it."""
    if not isinstance(content, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", content):
        return None
    try:
        sealed = json.loads(base64.urlsafe_b64decode(content + "=" * (-len(content) % 4)).decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(sealed, dict) or sealed.get("v") != 1 or not isinstance(sealed.get("summary"), str):
        return None
    return sealed["summary"]


def _call_ids(items):
    """The call_ids of the function_call items among `items`: what a later function_call_output may answer."""
    return {
        i["call_id"]
        for i in items
        if isinstance(i, dict) and i.get("type") == "function_call" and isinstance(i.get("call_id"), str)
    }


def _textless_part(parts, index):
    """Whether part `index` is a text part without its text."""
    if not isinstance(parts, list) or index >= len(parts) or not isinstance(parts[index], dict):
        return False
    return parts[index].get("type") in _TEXT_PARTS and not isinstance(parts[index].get("text"), str)


def _input_item_refusal(item, rest, code, images=False, known_calls=frozenset()):
    """Whether input item `item` breaks the rule named by the rest of the field (after `input[i]`). `images`: a user
    message's images are kept (a conversation's items); `known_calls`: the call_ids a function_call_output may answer
    (the function_calls before it)."""
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    if kind == "item_reference" or (kind is None and item.get("role") is None and isinstance(item.get("id"), str)):
        # An item_reference (or an item that is nothing but an id) names an item among the end user's stored
        # items, which a generated id never is.
        return code == "INVALID_PARAMETER" and rest == ".id"
    kind = kind or ("message" if item.get("role") else None)
    parts = re.fullmatch(r"\.(content|output)\[(\d+)\](\.text|\.image_url)?", rest)
    if parts:
        # A message's content parts, or a function_call_output's output parts (read the same way; an image only in a
        # user message).
        container = "message" if parts.group(1) == "content" else "function_call_output"
        if kind != container:
            return False
        listed, index = item.get(parts.group(1)), int(parts.group(2))
        user_images = images and kind == "message" and item.get("role") == "user"
        if code == "UNSUPPORTED_CONTENT":
            return not parts.group(3) and _unreadable_part(listed, index, user_images)
        if parts.group(3) == ".image_url":
            part = listed[index] if isinstance(listed, list) and index < len(listed) else None
            return (
                user_images
                and isinstance(part, dict)
                and part.get("type") == "input_image"
                and not _has_image_url(part)
                and not isinstance(part.get("file_id"), str)
            )
        return bool(parts.group(3)) and _textless_part(listed, index)
    if code != "INVALID_PARAMETER":
        return False
    if rest == "":
        named = isinstance(item.get("call_id"), str) and isinstance(item.get("name"), str)
        return kind == "function_call" and not named
    if rest == ".call_id":
        # Required, and it must answer a function_call before it in the conversation.
        return kind == "function_call_output" and item.get("call_id") not in known_calls
    if rest == ".encrypted_content":
        return kind == "compaction" and _summary(item.get("encrypted_content")) is None
    if rest == ".output":
        return kind == "function_call_output" and not isinstance(item.get("output"), (str, list))
    if rest == ".approval_request_id":
        # An mcp_approval_response must name an mcp_approval_request waiting in previous_response_id (docs/mcp.md):
        # a generated request never has one waiting.
        return kind == "mcp_approval_response"
    if rest == ".approve":
        return kind == "mcp_approval_response" and not isinstance(item.get("approve"), bool)
    if rest == ".type":
        return kind is None
    if kind != "message":
        return False
    if rest == ".role":
        return item.get("role") not in _ROLES
    if rest == ".content":
        return not isinstance(item.get("content"), (str, list))
    return False


def _input_refusal(items, at, code, details, images=False, held=()):
    """Whether a 400 naming an input item (`input[i]…`, or `items[i]…` for a conversation, `at` says which) names a
    rule the item really breaks; `held`: the items of the conversation the input goes into."""
    match = re.fullmatch(re.escape(at) + r"\[(\d+)\](.*)", details.get("field", ""))
    if not match or int(match.group(1)) >= len(items):
        return False
    index, rest = int(match.group(1)), match.group(2)
    item = items[index]
    if rest == ".id" and code == "INVALID_PARAMETER" and isinstance(item, dict):
        given = item.get("id")
        if details.get("reason") == "is already in the conversation":
            return given in {h.get("id") for h in held if isinstance(h, dict)}
        if details.get("reason") == "is given twice":
            return isinstance(given, str) and any(isinstance(o, dict) and o.get("id") == given for o in items[:index])
    known = _call_ids(held) | _call_ids(items[:index])
    return _input_item_refusal(item, rest, code, images=images, known_calls=known)


def _compact_refusal(body, code, details):
    """Whether a 400 of POST /z1/responses/compact names a rule the request really breaks: its input items are read
    as a response's are, and a conversation of nothing (no previous_response_id, no input item that is a turn) is
    nothing to compact (docs/responses-conformance.md, *Compaction*)."""
    inputs = body.get("input")
    items = inputs if isinstance(inputs, list) else []
    if details.get("field") == "input" and details.get("reason") == "is required without previous_response_id":
        turns = {"message", "function_call", "function_call_output"}
        return (
            code == "INVALID_PARAMETER"
            and not body.get("previous_response_id")
            and not isinstance(inputs, str)
            and not any(
                isinstance(i, dict)
                and ((i.get("type") or ("message" if i.get("role") else None)) in turns or _summary_turn(i))
                for i in items
            )
        )
    return _input_refusal(items, "input", code, details)


def _summary_turn(item):
    """Whether a compaction item adds a turn: one whose summary is not empty."""
    return item.get("type") == "compaction" and bool(_summary(item.get("encrypted_content")))


def _conversation_refusal(body, code, details, held=()):
    """Whether a 400 of POST /z1/conversations or …/{id}/items names a rule the request really breaks: its items are
    read as a response's input is (images kept in a user message), an id must be new to the conversation (`held`, its
    items as the server lists them) and not given twice (docs/responses-conformance.md, *Conversations*)."""
    items = body.get("items") if isinstance(body.get("items"), list) else []
    return _input_refusal(items, "items", code, details, images=True, held=held)


def _responses_refusal(body, code, details, held=()):
    """Whether a 400 of POST /z1/responses names a rule the request really breaks (see schemathesis_hooks.py); `held`:
    the items of the conversation it names, if any."""
    field = details.get("field", "")
    inputs = body.get("input")
    items = inputs if isinstance(inputs, list) else []
    if field.startswith("input["):
        return _input_refusal(items, "input", code, details, held=held)
    tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    match = re.fullmatch(r"tools\[(\d+)\]\.max_num_results", field)
    if code == "RAG_K_EXCEEDS_TIER" and match:
        # file_search's results past the tier's rag_k (not on the contract server's enterprise account).
        index = int(match.group(1))
        wanted = tools[index].get("max_num_results") if index < len(tools) else None
        return _is_number(wanted) and _is_number(details.get("max")) and wanted > details["max"]
    if code != "INVALID_PARAMETER":
        return False
    if field == "include":
        return "message.output_text.logprobs" in (body.get("include") or [])
    if field == "conversation":
        return body.get("conversation") is not None and bool(body.get("previous_response_id"))
    if field == "background":
        return body.get("background") is True and body.get("store") is False
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
    if field == "tool_choice":
        # A call the model must make (`required`, or a tool named) with no tools at all (as OpenAI refuses it).
        return (choice == "required" or isinstance(choice, dict)) and not body.get("tools")
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
