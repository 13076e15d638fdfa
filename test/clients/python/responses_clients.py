"""The Responses API (`/z1/responses`) through the `openai` SDK, unmodified: `responses.create` (string input; a
function tool's call and its output sent back through `previous_response_id`), `responses.stream` with the SDK's
typed events (text, and a function call's arguments), `retrieve`, `input_items.list` (paged), `delete`, and its
errors. Imported by test/clients/python/python_clients.py, after its other `openai` checks: each check runs where
it is defined, so these run at that import, in this order. ChatOpenAI with `use_responses_api=True` is checked with
the rest of LangChain in python_clients.py.
"""

import json

import openai

from client_checks import CHAT_MODEL, MAX_TOKENS, check, client, expect, expect_pvai_error, ok, raw_error

RESPONSE_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "The current weather in a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city's name"}},
        "required": ["city"],
    },
}


def expect_answered(response, what, max_tokens=MAX_TOKENS):
    """A response that ran to its end: `resp_` id, completed (or incomplete at max_output_tokens), usage within it."""
    expect(response.object == "response" and response.id.startswith("resp_"), f"{what}: id {response.id!r}")
    expect(response.status in ("completed", "incomplete"), f"{what}: status {response.status} ({response.error})")
    if response.status == "incomplete":
        reason = response.incomplete_details and response.incomplete_details.reason
        expect(reason == "max_output_tokens", f"{what}: incomplete for {reason!r}")
    usage = response.usage
    expect(usage is not None and usage.input_tokens > 0, f"{what}: usage {usage}")
    expect(0 < usage.output_tokens <= max_tokens, f"{what}: {usage.output_tokens} output tokens for {max_tokens}")
    expect(usage.total_tokens == usage.input_tokens + usage.output_tokens, f"{what}: usage does not add up: {usage}")


def only_call(response, what):
    """The response's one function_call output item."""
    calls = [item for item in response.output if item.type == "function_call"]
    expect(len(calls) == 1 and calls[0].name == "get_weather", f"{what}: output {response.output}")
    expect(calls[0].call_id and calls[0].id, f"{what}: the call has no call_id or id: {calls[0]}")
    return calls[0]


@check("openai: responses.create")
def _():
    response = client.responses.create(
        model=CHAT_MODEL,
        input="Count from one to twenty: one, two, three,",
        instructions="Answer briefly.",
        max_output_tokens=MAX_TOKENS,
        temperature=0,
        user="python-alice",
    )
    expect_answered(response, "responses.create")
    messages = [item for item in response.output if item.type == "message"]
    expect(len(messages) == 1 and messages[0].role == "assistant", f"output {response.output}")
    expect(response.output_text.strip(), f"no text: {response.output}")
    expect(
        response.instructions == "Answer briefly." and response.max_output_tokens == MAX_TOKENS, "settings not echoed"
    )
    expect(response.user_id == "python-alice", f"the end user is {getattr(response, 'user_id', None)!r}")
    ok(
        f"openai: responses.create (string input, instructions, user=): {response.id} {response.status}, "
        f"{response.output_text!r}, {response.usage.output_tokens} tokens"
    )


@check("openai: responses function tool round trip through previous_response_id")
def _():
    first = client.responses.create(
        model=CHAT_MODEL,
        input="What is the weather in Paris?",
        tools=[RESPONSE_TOOL],
        tool_choice={"type": "function", "name": "get_weather"},
        safety_identifier="python-dana",
    )
    expect(first.status == "completed", f"first: status {first.status}")
    call = only_call(first, "first")
    arguments = json.loads(call.arguments)
    expect(isinstance(arguments.get("city"), str), f"arguments {arguments}")
    # The agent loop of OpenAI's guide: the function's output, by call_id, continues the stored conversation.
    second = client.responses.create(
        model=CHAT_MODEL,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": json.dumps({"sky": "sunny"})}],
        tools=[RESPONSE_TOOL],
        max_output_tokens=MAX_TOKENS,
        safety_identifier="python-dana",
    )
    expect_answered(second, "second")
    expect(second.previous_response_id == first.id, f"previous_response_id {second.previous_response_id}")
    # The conversation was carried: the second call's prompt holds the first's question, call and the output.
    expect(
        second.usage.input_tokens > first.usage.input_tokens,
        f"second prompt {second.usage.input_tokens} tokens, first {first.usage.input_tokens}: no history carried",
    )
    # Its whole context, newest first: its own function_call_output, then the first's call and question.
    items = list(client.responses.input_items.list(second.id))
    expect(
        [item.type for item in items] == ["function_call_output", "function_call", "message"]
        and items[0].call_id == call.call_id
        and items[1].call_id == call.call_id,
        f"second's input items {items}",
    )
    expect(items[0].id, "the function_call_output item has no id")
    kinds = [item.type for item in second.output]
    ok(
        f"openai: get_weather({arguments}) call_id {call.call_id} in {first.id}; its output through "
        f"previous_response_id: {second.id} {second.status} {kinds}, prompt {first.usage.input_tokens} → "
        f"{second.usage.input_tokens} tokens"
    )


@check("openai: responses.stream")
def _():
    with client.responses.stream(
        model=CHAT_MODEL,
        input="Tell me a short story about a fox.",
        max_output_tokens=MAX_TOKENS,
        extra_body={"user_id": "python-bob", "skip_cache": True},
    ) as stream:
        seen = list(stream)
    # The last event carries the whole response: `response.completed`, or `response.incomplete` when the answer
    # reached max_output_tokens, as OpenAI streams it (the SDK's get_final_response() knows only the first).
    final = seen[-1].response
    types = [e.type for e in seen]
    expect(types[:2] == ["response.created", "response.in_progress"], f"first events {types[:2]}")
    expect(types[-1] in ("response.completed", "response.incomplete"), f"last event {types[-1]}")
    expect(final.status == types[-1].removeprefix("response."), f"{types[-1]} carries status {final.status}")
    numbers = [e.sequence_number for e in seen]
    expect(numbers == list(range(len(seen))), f"sequence numbers {numbers}")
    for expected in (
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
    ):
        expect(expected in types, f"no {expected} in {types}")
    order = [types.index("response.output_item.added"), types.index("response.output_text.delta")]
    order += [types.index("response.output_text.done"), types.index("response.output_item.done")]
    expect(order == sorted(order), f"events out of order: {types}")
    deltas = [e for e in seen if e.type == "response.output_text.delta"]
    text = "".join(e.delta for e in deltas)
    done = next(e for e in seen if e.type == "response.output_text.done")
    expect(len(deltas) > 1 and text.strip(), f"{len(deltas)} deltas: {text!r}")
    # The SDK's snapshot is the text so far; the done event, the final response and the stored one are all of it.
    expect(deltas[-1].snapshot == text == done.text == final.output_text, "the deltas do not add up")
    expect(final.id == seen[0].response.id, f"final {final.id}, created {seen[0].response.id}")
    expect_answered(final, "stream")
    stored = client.responses.retrieve(final.id)
    expect(
        stored.output_text == text and stored.status == final.status, f"stored: {stored.status} {stored.output_text!r}"
    )
    ok(
        f"openai: responses.stream: {len(seen)} typed events in order, {len(deltas)} deltas = {text!r}, "
        f"stored as {final.id}"
    )

    with client.responses.stream(
        model=CHAT_MODEL,
        input="What is the weather in Lisbon?",
        tools=[RESPONSE_TOOL],
        tool_choice={"type": "function", "name": "get_weather"},
        user="python-bob",
    ) as stream:
        events = list(stream)
        final = stream.get_final_response()
    deltas = [e for e in events if e.type == "response.function_call_arguments.delta"]
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    call = only_call(final, "streamed call")
    expect(deltas and len(done) == 1, f"{len(deltas)} argument deltas, {len(done)} done events")
    expect("".join(e.delta for e in deltas) == done[0].arguments == call.arguments, "the argument deltas do not add up")
    expect(isinstance(json.loads(call.arguments).get("city"), str), f"arguments {call.arguments}")
    ok(f"openai: responses.stream of a function call: {len(deltas)} argument deltas → get_weather({call.arguments})")


@check("openai: responses.retrieve, input_items.list, delete")
def _():
    turns = ["My name is Ada.", "I live in Lyon.", "Where do I live?"]
    response = client.responses.create(
        model=CHAT_MODEL,
        input=[{"role": "user", "content": [{"type": "input_text", "text": t}]} for t in turns],
        max_output_tokens=MAX_TOKENS,
        metadata={"suite": "python-clients"},
        user="python-erin",
    )
    expect_answered(response, "create")
    got = client.responses.retrieve(response.id)
    expect(got.id == response.id and got.output_text == response.output_text, f"retrieved {got}")
    expect([i.id for i in got.output] == [i.id for i in response.output], "retrieved output items differ")
    expect(got.metadata == {"suite": "python-clients"}, f"metadata {got.metadata}")
    # The SDK pages with `after` = the last id while `has_more`: one item a page, newest first (OpenAI's default).
    newest_first = list(client.responses.input_items.list(response.id, limit=1))
    texts = [item.content[0].text for item in newest_first]
    expect(texts == turns[::-1], f"input items, newest first, a page of one at a time: {texts}")
    expect(all(item.id and item.type == "message" and item.role == "user" for item in newest_first), "items")
    oldest_first = [item.id for item in client.responses.input_items.list(response.id, order="asc")]
    expect(oldest_first == [item.id for item in newest_first][::-1], "order=asc is not the reverse of desc")
    deleted = client.responses.delete(response.id)
    expect(deleted is None, f"delete returned {deleted!r}")
    try:
        client.responses.retrieve(response.id)
        raise AssertionError("a deleted response was retrieved")
    except openai.NotFoundError as err:
        expect(err.status_code == 404 and err.code == "not_found", f"{err.status_code} {err.code}")
    try:
        client.responses.create(
            model=CHAT_MODEL, previous_response_id=response.id, input="And then?", user="python-erin"
        )
        raise AssertionError("a deleted response was continued")
    except openai.NotFoundError:
        pass
    ok(
        f"openai: retrieve {response.id} as created; input_items.list {len(texts)} items paged one at a time, desc "
        "and asc; delete, then retrieve and previous_response_id → NotFoundError 404"
    )


@check("openai: responses errors carry pvai's message")
def _():
    body = {"model": "PV-NOPE", "input": "hi", "user": "python-alice"}
    status, expected = raw_error("/responses", body)
    try:
        client.responses.create(model="PV-NOPE", input="hi", user="python-alice")
        raise AssertionError("an unknown model was answered")
    except openai.BadRequestError as err:
        expect_pvai_error(err, status, expected)
    ok(f"openai: responses: unknown model → BadRequestError {status}: {expected['message']!r}")
    both = {"conversation": "conv_python", "previous_response_id": "resp_python"}
    status, expected = raw_error("/responses", {"model": CHAT_MODEL, "input": "hi", **both})
    try:
        client.responses.create(model=CHAT_MODEL, input="hi", **both)
        raise AssertionError("a response with both conversation and previous_response_id was answered")
    except openai.BadRequestError as err:
        expect_pvai_error(err, status, expected)
    ok(f"openai: responses: conversation and previous_response_id → {status}: {expected['message']!r}")
    # Naming no end user is allowed on the Responses API (OpenAI's clients name none): the key's, here `default`.
    response = client.responses.create(model=CHAT_MODEL, input="hi", max_output_tokens=MAX_TOKENS)
    expect(response.user_id == "default" and response.user is None, f"end user {response.user_id!r}")
    ok(f"openai: responses.create naming no end user → {response.status}, the key's end user {response.user_id!r}")
