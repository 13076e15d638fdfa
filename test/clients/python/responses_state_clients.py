"""The stateful Responses API through the `openai` SDK, unmodified: background responses (`background=True`, polled
with `retrieve`, cancelled with `cancel`, their events followed again after a dropped stream with
`retrieve(stream=True, starting_after=…)`), the Conversations API (`conversations.*`, `conversation=` on
`responses.create`), `responses.compact` and its output continued, and WebSocket mode (`responses.connect()`, which
needs the `websockets` package: CI pins it in .ci/run). Imported by test/clients/python/python_clients.py after
responses_clients.py: each check runs where it is defined, in this order. The model is SmolLM2: nothing here asserts
its wording, only what the SDK returns (types, statuses, ids, orders, sequence numbers).
"""

import base64
import json
import time

import openai

from client_checks import CHAT_MODEL, check, client, expect, expect_pvai_error, ok, raw_error

RUNNING = ("queued", "in_progress")
TERMINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed", "response.cancelled")
# Short factual questions at temperature 0 that SmolLM2 answers in a few tokens: they end `completed`.
SHORT = {"instructions": "Answer in one short sentence.", "temperature": 0, "max_output_tokens": 128}
STORY = "Write a very long story about a knight and a dragon, in many chapters, with every detail of their journey."


def poll(response_id, statuses, until=RUNNING, timeout=180):
    """`retrieve` every 100 ms while the status is one of `until`; each status seen is noted in `statuses`."""
    deadline = time.monotonic() + timeout
    while True:
        response = client.responses.retrieve(response_id)
        if not statuses or statuses[-1] != response.status:
            statuses.append(response.status)
        if response.status not in until:
            return response
        expect(time.monotonic() < deadline, f"{response_id} still {response.status} after {timeout}s: {statuses}")
        time.sleep(0.1)


def expect_numbered(events, what, first=0):
    numbers = [e.sequence_number for e in events]
    expect(numbers == list(range(first, first + len(events))), f"{what}: sequence numbers {numbers}")


def message_text(item):
    """The text of a message item, whether its content is a string or parts."""
    if isinstance(item.content, str):
        return item.content
    return "".join(part.text for part in item.content)


@check("openai: background response, polled")
def _():
    queued = client.responses.create(
        model=CHAT_MODEL, input="What is the capital of France?", background=True, user="python-gina", **SHORT
    )
    expect(queued.id.startswith("resp_") and queued.background is True, f"created: {queued.id} {queued.background}")
    expect(queued.status in RUNNING, f"a background response answers {queued.status}, not queued")
    expect(queued.output == [] and queued.usage is None, f"queued with output {queued.output}, usage {queued.usage}")
    statuses = [queued.status]
    done = poll(queued.id, statuses)
    expect(done.status == "completed", f"ended {done.status}: {done.error or done.incomplete_details}; seen {statuses}")
    expect(statuses == sorted(statuses, key=["queued", "in_progress", "completed"].index), f"statuses {statuses}")
    expect(done.id == queued.id and done.background is True and done.output_text.strip(), f"completed: {done}")
    expect(done.usage.output_tokens > 0 and done.usage.input_tokens > 0, f"usage {done.usage}")
    # A cancel after the end changes nothing: the response as it ended.
    again = client.responses.cancel(done.id)
    expect(again.status == "completed" and again.output_text == done.output_text, f"cancel after the end: {again}")
    ok(
        f"openai: background=True → {queued.status} {queued.id}; retrieve polled {' → '.join(statuses)}: "
        f"{done.output_text!r} ({done.usage.output_tokens} tokens); cancel after the end → completed, unchanged"
    )


def cancel_while_running(max_output_tokens):
    """A long story in the background, cancelled once it runs: the cancel's answer, and what retrieve saw before."""
    started = client.responses.create(
        model=CHAT_MODEL,
        input=STORY,
        background=True,
        max_output_tokens=max_output_tokens,
        user="python-hank",
        extra_body={"skip_cache": True},
    )
    statuses = [started.status]
    running = poll(started.id, statuses, until=("queued",), timeout=60)
    time.sleep(0.5)
    return client.responses.cancel(running.id), statuses


@check("openai: background response cancelled")
def _():
    cancelled, statuses = cancel_while_running(1000)
    note = ""
    if cancelled.status != "cancelled":
        # The model ended the story first: the cancel answered it as it ended (the contract's rule); once more, longer.
        expect(cancelled.status in ("completed", "incomplete"), f"cancel answered {cancelled.status}")
        note = f" (the first story ended {cancelled.status} before the cancel; retried with 4000 tokens)"
        cancelled, statuses = cancel_while_running(4000)
    expect(cancelled.status == "cancelled", f"cancel answered {cancelled.status}{note}; retrieve saw {statuses}")
    expect(cancelled.background is True and cancelled.id.startswith("resp_"), f"cancelled: {cancelled}")
    # What it wrote before the cancel is kept, its message cut (`incomplete`).
    messages = [item for item in cancelled.output if item.type == "message"]
    expect(all(m.status == "incomplete" for m in messages), f"cancelled output {cancelled.output}")
    kept = cancelled.output_text
    got = client.responses.retrieve(cancelled.id)
    expect(got.status == "cancelled" and got.output_text == kept, f"retrieve after the cancel: {got.status}")
    expect(client.responses.cancel(cancelled.id).status == "cancelled", "a second cancel changed it")
    events = list(client.responses.retrieve(cancelled.id, stream=True))
    types = [e.type for e in events]
    expect_numbered(events, "its events")
    expect(types[:2] == ["response.created", "response.queued"], f"first events {types[:3]}")
    expect(types[-1] == "response.cancelled" and types.count("response.cancelled") == 1, f"last events {types[-3:]}")
    # Only a background response can be cancelled: pvai's 400, through the SDK.
    plain = client.responses.create(model=CHAT_MODEL, input="Hi", max_output_tokens=4, user="python-hank")
    status, expected = raw_error(f"/responses/{plain.id}/cancel", {})
    try:
        client.responses.cancel(plain.id)
        raise AssertionError("a response that was not in the background was cancelled")
    except openai.BadRequestError as err:
        expect_pvai_error(err, status, expected)
    ok(
        f"openai: responses.cancel of a running background story ({' → '.join(statuses)}) → cancelled{note}, "
        f"{len(kept)} characters kept; retrieve cancelled; its {len(events)} events end response.cancelled; "
        f"cancel of a foreground response → BadRequestError {status}: {expected['message']!r}"
    )


@check("openai: background stream resumed with starting_after")
def _():
    stream = client.responses.create(
        model=CHAT_MODEL,
        input="Tell me a story about a dragon.",
        background=True,
        stream=True,
        max_output_tokens=200,
        user="python-ivy",
        # An answer from pvai's response cache is replayed as one delta: the drop would come after its end.
        extra_body={"skip_cache": True},
    )
    before = []
    for event in stream:
        before.append(event)
        if event.type in TERMINAL_EVENTS or sum(e.type == "response.output_text.delta" for e in before) >= 3:
            break
    stream.close()  # the connection dropped: the response runs on
    expect(before[-1].type not in TERMINAL_EVENTS, f"it ended before the third delta: {[e.type for e in before]}")
    expect_numbered(before, "before the drop")
    types = [e.type for e in before]
    expect(types[:3] == ["response.created", "response.queued", "response.in_progress"], f"first events {types}")
    response_id = before[0].response.id
    expect(before[0].response.status == "queued", f"response.created carries {before[0].response.status}")
    last = before[-1].sequence_number
    running = client.responses.retrieve(response_id).status
    after = list(client.responses.retrieve(response_id, stream=True, starting_after=last))
    expect(after, f"nothing after {last}")
    expect_numbered(after, f"after starting_after={last}", first=last + 1)
    expect(after[-1].type in ("response.completed", "response.incomplete"), f"last event {after[-1].type}")
    expect(all(e.type not in TERMINAL_EVENTS for e in before + after[:-1]), "a terminal event before the last")
    final = after[-1].response
    text = "".join(e.delta for e in before + after if e.type == "response.output_text.delta")
    stored = client.responses.retrieve(response_id)
    expect(text.strip() and text == final.output_text == stored.output_text, f"the deltas {text!r}, final {final}")
    expect(stored.status == final.status and final.id == response_id, f"stored {stored.status}, final {final.status}")
    # From the start, the whole log: the same events, in the same order.
    replay = list(client.responses.retrieve(response_id, stream=True))
    expect(
        [(e.type, e.sequence_number) for e in replay] == [(e.type, e.sequence_number) for e in before + after],
        "the replayed log differs from the events read",
    )
    ok(
        f"openai: background stream dropped after #{last} ({len(before)} events), the response {running}; "
        f"retrieve(stream=True, starting_after={last}) → #{last + 1}…#{after[-1].sequence_number}, no gap or "
        f"duplicate, {after[-1].type}; the deltas = the stored text ({len(text)} characters); replay identical"
    )


@check("openai: conversations across three turns")
def _():
    conversation = client.conversations.create(metadata={"suite": "python-clients"})
    expect(conversation.id.startswith("conv_") and conversation.object == "conversation", f"created {conversation}")
    expect(conversation.metadata == {"suite": "python-clients"}, f"metadata {conversation.metadata}")
    turns = ["My name is Ada.", "I live in Lyon.", "Where do I live?"]
    responses = []
    for turn in turns:
        response = client.responses.create(
            model=CHAT_MODEL, conversation=conversation.id, input=turn, max_output_tokens=16, temperature=0
        )
        expect(response.status in ("completed", "incomplete"), f"{turn!r}: {response.status} {response.error}")
        expect(response.conversation and response.conversation.id == conversation.id, f"{response.conversation}")
        responses.append(response)
    # Each turn was given the ones before it.
    prompts = [r.usage.input_tokens for r in responses]
    expect(prompts == sorted(prompts) and prompts[0] < prompts[-1], f"prompt tokens {prompts}: no history carried")
    items = list(client.conversations.items.list(conversation.id, order="asc"))
    roles = [(i.type, i.role) for i in items]
    expect(roles == [("message", "user"), ("message", "assistant")] * 3, f"items {roles}")
    expect([message_text(i) for i in items[::2]] == turns, f"user items {[message_text(i) for i in items[::2]]}")
    answers = [[o.id for o in r.output if o.type == "message"] for r in responses]
    expect([[i.id] for i in items[1::2]] == answers, f"answer items {[i.id for i in items[1::2]]}, outputs {answers}")
    expect([message_text(i) for i in items[1::2]] == [r.output_text for r in responses], "the answers differ")
    newest = [i.id for i in client.conversations.items.list(conversation.id, limit=2)]
    expect(newest == [i.id for i in items][::-1], "the default order (desc, paged by 2) is not the reverse")

    got = client.conversations.retrieve(conversation.id)
    expect(got.id == conversation.id and got.created_at == conversation.created_at, f"retrieved {got}")
    updated = client.conversations.update(conversation.id, metadata={"topic": "lyon"})
    expect(updated.metadata == {"topic": "lyon"}, f"updated metadata {updated.metadata}")
    expect(client.conversations.retrieve(conversation.id).metadata == {"topic": "lyon"}, "the update was not kept")
    bye = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Bye."}]}
    added = client.conversations.items.create(conversation.id, items=[bye])
    expect(len(added.data) == 1 and added.data[0].id and added.first_id == added.data[0].id, f"added {added}")
    item = client.conversations.items.retrieve(added.data[0].id, conversation_id=conversation.id)
    expect(item.id == added.data[0].id and item.role == "user" and message_text(item) == "Bye.", f"item {item}")
    after_delete = client.conversations.items.delete(item.id, conversation_id=conversation.id)
    expect(after_delete.id == conversation.id and after_delete.object == "conversation", f"{after_delete}")
    left = [i.id for i in client.conversations.items.list(conversation.id, order="asc")]
    expect(left == [i.id for i in items], f"after items.delete: {left}")

    # Another end user's conversation is absent; a deleted one too.
    try:
        client.responses.create(model=CHAT_MODEL, conversation=conversation.id, input="Hi", user="python-mallory")
        raise AssertionError("another end user continued the conversation")
    except openai.NotFoundError as err:
        expect(err.code == "not_found", f"code {err.code}")
    deleted = client.conversations.delete(conversation.id)
    expect(deleted.id == conversation.id and deleted.deleted is True, f"deleted {deleted}")
    try:
        client.conversations.retrieve(conversation.id)
        raise AssertionError("a deleted conversation was retrieved")
    except openai.NotFoundError:
        pass
    try:
        client.responses.create(model=CHAT_MODEL, conversation=conversation.id, input="Hi")
        raise AssertionError("a deleted conversation was continued")
    except openai.NotFoundError:
        pass
    ok(
        f"openai: conversation {conversation.id}, three responses in it (prompts {prompts} tokens); items.list asc = "
        f"3 inputs and 3 answers in order (desc paged by 2 = the reverse); retrieve, update, items.create/retrieve/"
        f"delete; another end user's and a deleted one → NotFoundError"
    )


@check("openai: responses.compact, then continued")
def _():
    said = ["We agreed to launch the rocket on Tuesday at noon.", "Understood: the launch is on Tuesday at noon."]
    compacted = client.responses.compact(
        model=CHAT_MODEL,
        input=[
            {"type": "message", "role": "user", "content": said[0]},
            {"type": "message", "role": "assistant", "content": said[1]},
        ],
    )
    expect(compacted.object == "response.compaction" and compacted.id.startswith("resp_"), f"{compacted}")
    kinds = [(item.type, getattr(item, "role", None)) for item in compacted.output]
    expect(kinds == [("message", "user"), ("compaction", None)], f"output {kinds}")
    expect(message_text(compacted.output[0]) == said[0], f"the user's message {compacted.output[0]}")
    compaction = compacted.output[1]
    expect(compaction.id.startswith("cmp_") and compaction.encrypted_content, f"compaction {compaction}")
    content = compaction.encrypted_content
    summary = json.loads(base64.urlsafe_b64decode(content + "=" * (-len(content) % 4)))
    expect(summary.get("v") == 1 and summary.get("summary", "").strip(), f"encrypted_content holds {summary}")
    expect(compacted.usage.input_tokens > 0 and compacted.usage.output_tokens > 0, f"usage {compacted.usage}")
    # The SDK types compact's output as output items, so its user message (input_text parts) does not fit
    # ResponseOutputMessage: serialising it warns; warnings=False passes the items on as the server sent them.
    carried = [item.to_dict(warnings=False) for item in compacted.output]
    expect(carried[0]["content"][0]["type"] == "input_text", f"the user's message serialised as {carried[0]}")
    follow = client.responses.create(
        model=CHAT_MODEL, input=[*carried, {"role": "user", "content": "When is the launch?"}], **SHORT
    )
    expect(follow.status == "completed" and follow.output_text.strip(), f"after the compaction: {follow.status}")
    kept = [item.type for item in client.responses.input_items.list(follow.id, order="asc")]
    expect(kept == ["message", "compaction", "message"], f"its input items {kept}")
    ok(
        f"openai: responses.compact → response.compaction [user message, compaction {compaction.id}] "
        f"(summary {summary['summary']!r}); continued with item.to_dict(warnings=False) + a new message: "
        f"{follow.status} {follow.output_text!r}"
    )


def socket_response(connection, what):
    """The events of one response on the socket, up to its terminal event (or an error message)."""
    events = []
    for event in connection:
        events.append(event)
        if event.type in TERMINAL_EVENTS or event.type == "error":
            return events
    raise AssertionError(f"{what}: the socket closed after {[e.type for e in events]}")


def expect_socket_completed(events, what):
    types = [e.type for e in events]
    expect(types[-1] != "error", f"{what}: error message {events[-1]}")
    expect_numbered(events, what)
    expect(types[0] == "response.created" and types[-1] == "response.completed", f"{what}: events {types}")
    final = events[-1].response
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    expect(text.strip() and text == final.output_text, f"{what}: deltas {text!r}, final {final.output_text!r}")
    return final


@check("openai: responses.connect (WebSocket mode)")
def _():
    bad_body = {"model": "PV-NOPE", "input": "Hi", "user": "python-judy"}
    status, expected = raw_error("/responses", bad_body)
    with client.responses.connect() as connection:
        ask = {"user": "python-judy", "store": False, **SHORT}
        connection.response.create(model=CHAT_MODEL, input="What is the capital of France?", **ask)
        first = expect_socket_completed(socket_response(connection, "first"), "first")
        # A refusal is an error message; the socket stays open for the next one.
        connection.response.create(model="PV-NOPE", input="Hi", user="python-judy")
        refused = socket_response(connection, "refused")
        expect(len(refused) == 1 and refused[0].type == "error", f"refused: {[e.type for e in refused]}")
        error = refused[0]
        expect(error.status == status and error.error.message == expected["message"], f"error message {error}")
        expect(error.error.code == expected["error"]["code"], f"error code {error.error.code}")
        # store=False: the socket keeps the first, so the second continues it.
        connection.response.create(
            model=CHAT_MODEL, input="And the capital of Italy?", previous_response_id=first.id, **ask
        )
        second = expect_socket_completed(socket_response(connection, "second"), "second")
    expect(second.previous_response_id == first.id and second.id != first.id, f"second {second.id}")
    expect(second.usage.input_tokens > first.usage.input_tokens, "the second was not given the first")
    try:
        client.responses.retrieve(first.id)
        raise AssertionError("a store=False response was stored")
    except openai.NotFoundError:
        pass
    ok(
        f"openai: responses.connect(): two response.create on one socket → response.completed "
        f"({first.output_text!r}; {second.output_text!r} through previous_response_id of the store=False first), "
        f"a bad model between them → error {status} {error.error.code!r}, the socket open"
    )
