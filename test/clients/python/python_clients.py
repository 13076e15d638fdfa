#!/usr/bin/env python3
"""The Python clients people use, unmodified, against a running pvai server: the `openai` SDK and LangChain's
`langchain-openai` (`ChatOpenAI`, `OpenAIEmbeddings`), each as its documentation shows, pointed at `/z1`.

    node test/contract/serve-for-contract.mjs --upstream none --models setup -- \\
      .tools/venv/bin/python test/clients/python/python_clients.py

(serve-for-contract.mjs sets PVAI_URL, PVAI_API_KEY and PVAI_ADMIN_TOKEN; `--upstream none --models setup` gives
the server the set-up's SmolLM2 for the PV models and all-MiniLM-L6-v2 for PV-EMBED.) The versions are pinned in
.ci/run (setup_python). Every check prints `ok …` or `FAIL …`; the exit status is 1 when any failed.

The Responses API (`/z1/responses`) too: its `openai` SDK checks are in responses_clients.py and, for what it keeps
(background responses, conversations, compaction, WebSocket mode), responses_state_clients.py (both imported
below, where they run); ChatOpenAI with `use_responses_api=True` is checked here with the rest of LangChain. What
the checks share (the server, the client, `check`, `expect`, pvai's errors) is client_checks.py.

The end user: pvai needs one per chat request; a response or a conversation that names none is the key's
(`default`). The openai SDK names it with OpenAI's own `user` (or `safety_identifier`, for responses) here and with
pvai's `user_id` as an extra body field there; ChatOpenAI passes `user` through `model_kwargs`.
"""

import json
import math
import secrets
import sys
import urllib.request

import openai
from langchain_core.messages import AIMessageChunk
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI, OpenAIEmbeddings

sys.dont_write_bytecode = True  # the modules beside this one leave no __pycache__ in test/clients/python/
from client_checks import (  # noqa: E402
    ADMIN_TOKEN,
    API_KEY,
    BASE_URL,
    CHAT_MODEL,
    EMBEDDING_MODEL,
    MAX_TOKENS,
    URL,
    check,
    client,
    expect,
    expect_pvai_error,
    failures,
    ok,
    raw_error,
)

SIMILAR = ("The cat sat on the mat.", "A kitten is resting on the rug.")
UNRELATED = "Quarterly tax filings are due at the end of March."


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def expect_similar_closer(vectors, what):
    """vectors: [similar0, similar1, unrelated]; the two similar texts are closer than either is to the third."""
    expect(len(vectors) == 3, f"{what}: {len(vectors)} vectors for 3 texts")
    dims = {len(v) for v in vectors}
    expect(len(dims) == 1 and dims.pop() > 0, f"{what}: vectors of lengths {[len(v) for v in vectors]}")
    for v in vectors:
        expect(abs(math.sqrt(sum(x * x for x in v)) - 1) < 1e-3, f"{what}: a vector is not unit length")
    close, far0, far1 = cosine(vectors[0], vectors[1]), cosine(vectors[0], vectors[2]), cosine(vectors[1], vectors[2])
    expect(close > far0 and close > far1, f"{what}: similar {close:.3f}, unrelated {far0:.3f} / {far1:.3f}")
    return close, max(far0, far1)


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city's name"}},
            "required": ["city"],
        },
    },
}

print(f"openai {openai.__version__} against {BASE_URL} ({CHAT_MODEL}, {EMBEDDING_MODEL})")

# ------------------------------------------------------------------------------------------------ openai SDK


@check("openai: models.list")
def _():
    models = {m.id: m for m in client.models.list()}
    expect(CHAT_MODEL in models and EMBEDDING_MODEL in models, f"listed: {sorted(models)}")
    window = getattr(models[CHAT_MODEL], "context_window", None)
    expect(isinstance(window, int) and window > 0, f"{CHAT_MODEL} has no context_window: {models[CHAT_MODEL]}")
    ok(f"openai: models.list has {CHAT_MODEL} (context_window {window}) and {EMBEDDING_MODEL}")


@check("openai: chat.completions.create")
def _():
    completion = client.chat.completions.create(
        model=CHAT_MODEL,
        messages=[
            {"role": "developer", "content": "Answer briefly."},
            {"role": "user", "content": [{"type": "text", "text": "Count from one to twenty: "}]},
        ],
        max_completion_tokens=MAX_TOKENS,
        temperature=0,
        user="python-alice",
    )
    choice = completion.choices[0]
    expect(isinstance(choice.message.content, str) and choice.message.content.strip(), f"no text: {completion}")
    expect(completion.usage.completion_tokens <= MAX_TOKENS, f"usage {completion.usage}")
    expect(choice.finish_reason in ("stop", "length"), f"finish_reason {choice.finish_reason}")
    ok(
        f"openai: chat.completions.create (user=, developer role, text parts, max_completion_tokens={MAX_TOKENS}): "
        f"{choice.message.content!r}, {completion.usage.completion_tokens} tokens, {choice.finish_reason}"
    )


@check("openai: a stream")
def _():
    stream = client.chat.completions.create(
        model=CHAT_MODEL,
        messages=[{"role": "user", "content": "Tell me a short story about a fox."}],
        max_tokens=MAX_TOKENS,
        temperature=0,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"user_id": "python-bob", "skip_cache": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    pieces = sum(1 for c in chunks if c.choices and c.choices[0].delta.content)
    expect(pieces > 1 and text.strip(), f"{pieces} text chunks: {text!r}")
    last = chunks[-1]
    expect(last.choices == [] and last.usage is not None, f"the last chunk is not the usage chunk: {last}")
    expect(last.usage.completion_tokens <= MAX_TOKENS, f"usage {last.usage}")
    ok(f"openai: a stream (extra_body user_id) in {pieces} pieces, {text!r}, then the usage chunk ({last.usage.total_tokens} tokens)")

    plain = list(
        client.chat.completions.create(
            model=CHAT_MODEL,
            messages=[{"role": "user", "content": "Tell me a short story about a fox."}],
            max_tokens=MAX_TOKENS,
            stream=True,
            user="python-bob",
        )
    )
    expect(all(c.choices for c in plain), "a usage chunk came without stream_options.include_usage")
    expect(plain[0].choices[0].delta.role == "assistant", f"the first delta has no role: {plain[0]}")
    ok("openai: without stream_options every chunk has a choice (the usual `chunk.choices[0]` loop holds)")


@check("openai: a tool call and its result")
def _():
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    first = client.chat.completions.create(
        model=CHAT_MODEL,
        messages=messages,
        tools=[WEATHER_TOOL],
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        user="python-alice",
    )
    choice = first.choices[0]
    calls = choice.message.tool_calls or []
    expect(len(calls) == 1 and calls[0].function.name == "get_weather", f"tool calls: {calls}")
    arguments = json.loads(calls[0].function.arguments)
    expect(isinstance(arguments.get("city"), str), f"arguments {arguments}")
    expect(choice.finish_reason == "tool_calls", f"finish_reason {choice.finish_reason}")
    # The agent loop: the call and its result go back, and the model answers in text.
    messages += [
        choice.message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": calls[0].id, "content": json.dumps({"sky": "sunny", "celsius": 21})},
    ]
    second = client.chat.completions.create(
        model=CHAT_MODEL, messages=messages, tools=[WEATHER_TOOL], max_tokens=MAX_TOKENS, user="python-alice"
    )
    answer = second.choices[0].message
    expect(not answer.tool_calls and isinstance(answer.content, str), f"after the tool result: {answer}")
    ok(f"openai: tool call get_weather({arguments}) id {calls[0].id}; after its result, text {answer.content!r}")


@check("openai: embeddings")
def _():
    texts = [*SIMILAR, UNRELATED]
    # Without encoding_format the SDK asks for base64 and decodes it; the floats must be the same vectors.
    b64 = client.embeddings.create(model=EMBEDDING_MODEL, input=texts)
    floats = client.embeddings.create(model=EMBEDDING_MODEL, input=texts, encoding_format="float")
    expect([d.index for d in b64.data] == [0, 1, 2], f"indices {[d.index for d in b64.data]}")
    vectors = [d.embedding for d in b64.data]
    for a, b in zip(vectors, (d.embedding for d in floats.data)):
        expect(len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b)) < 1e-6, "base64 and float vectors differ")
    close, far = expect_similar_closer(vectors, "openai embeddings")
    expect(b64.usage.prompt_tokens > 0, f"usage {b64.usage}")
    single = client.embeddings.create(model=EMBEDDING_MODEL, input=SIMILAR[0], encoding_format="float")
    expect(len(single.data) == 1 and cosine(single.data[0].embedding, vectors[0]) > 0.9999, "one string != the list's first")
    ok(
        f"openai: embeddings ({len(vectors[0])} dims, base64 as the SDK asks = float): similar {close:.3f} > "
        f"unrelated {far:.3f}"
    )


@check("openai: errors carry pvai's message")
def _():
    body = {"model": "PV-NOPE", "messages": [{"role": "user", "content": "hi"}], "user": "python-alice"}
    status, expected = raw_error("/chat/completions", body)
    try:
        client.chat.completions.create(model="PV-NOPE", messages=body["messages"], user="python-alice")
        raise AssertionError("an unknown model was answered")
    except openai.BadRequestError as err:
        expect_pvai_error(err, status, expected)
    ok(f"openai: unknown model → BadRequestError {status}: {expected['message']!r}")

    status, expected = raw_error("/chat/completions", {"model": CHAT_MODEL, "messages": body["messages"]})
    try:
        client.chat.completions.create(model=CHAT_MODEL, messages=body["messages"])
        raise AssertionError("a chat without an end user was answered")
    except openai.BadRequestError as err:
        expect_pvai_error(err, status, expected)
    ok(f"openai: no end user → BadRequestError {status}: {expected['message']!r}")

    status, expected = raw_error("/embeddings", {"model": CHAT_MODEL, "input": ["hi"]})
    try:
        client.embeddings.create(model=CHAT_MODEL, input=["hi"])
        raise AssertionError(f"{CHAT_MODEL} embedded")
    except openai.BadRequestError as err:
        expect_pvai_error(err, status, expected)
    ok(f"openai: embeddings with a chat model → BadRequestError {status}: {expected['message']!r}")


# ------------------------------------------------------------------------------------------------ openai SDK: Responses

import responses_clients  # noqa: E402,F401  (its checks run here, in this order)
import responses_state_clients  # noqa: E402,F401  (then these)


# ------------------------------------------------------------------------------------------------ LangChain


def chat_openai(**kwargs):
    return ChatOpenAI(
        base_url=BASE_URL,
        api_key=API_KEY,
        model=CHAT_MODEL,
        max_tokens=MAX_TOKENS,
        temperature=0,
        max_retries=0,
        model_kwargs={"user": "langchain-carol"},
        **kwargs,
    )


@check("langchain: ChatOpenAI.invoke")
def _():
    reply = chat_openai().invoke("Count from one to twenty: one, two, three,")
    expect(isinstance(reply.content, str) and reply.content.strip(), f"no text: {reply!r}")
    usage = reply.usage_metadata or {}
    # LangChain 1.x sends max_tokens as max_completion_tokens: the model stops at it.
    expect(0 < usage.get("output_tokens", 0) <= MAX_TOKENS, f"usage {usage}")
    ok(
        f"langchain: ChatOpenAI(max_tokens={MAX_TOKENS}).invoke: {reply.content!r}, {usage['output_tokens']} tokens, "
        f"{reply.response_metadata.get('finish_reason')}"
    )


@check("langchain: ChatOpenAI.stream")
def _():
    chunks = list(chat_openai(stream_usage=True).stream("Tell me a short story about an owl."))
    texts = [c.content for c in chunks if isinstance(c, AIMessageChunk) and c.content]
    expect(len(texts) > 1, f"{len(texts)} text chunks")
    total = chunks[0]
    for c in chunks[1:]:
        total += c
    expect(total.content == "".join(texts), "the chunks do not add up")
    usage = total.usage_metadata or {}
    expect(0 < usage.get("output_tokens", 0) <= MAX_TOKENS, f"usage {usage}")
    ok(f"langchain: ChatOpenAI.stream in {len(texts)} pieces, {total.content!r}, usage {usage.get('total_tokens')} tokens")


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"sunny in {city}"


@check("langchain: ChatOpenAI.bind_tools")
def _():
    reply = chat_openai().bind_tools([get_weather]).invoke("What is the weather in Lisbon?")
    calls = reply.tool_calls
    expect(len(calls) == 1 and calls[0]["name"] == "get_weather", f"tool calls {calls}, content {reply.content!r}")
    expect(isinstance(calls[0]["args"].get("city"), str), f"args {calls[0]['args']}")
    expect(not reply.invalid_tool_calls, f"invalid tool calls {reply.invalid_tool_calls}")
    ok(f"langchain: bind_tools → tool call get_weather({calls[0]['args']}) id {calls[0]['id']}")


@check("langchain: ChatOpenAI(use_responses_api=True).invoke")
def _():
    reply = chat_openai(use_responses_api=True).invoke("Count from one to twenty: one, two, three,")
    text = reply.text
    expect(isinstance(text, str) and text.strip(), f"no text: {reply!r}")
    meta = reply.response_metadata
    expect(str(meta.get("id", "")).startswith("resp_"), f"not a response's id: {meta}")
    expect(meta.get("status") in ("completed", "incomplete"), f"status {meta.get('status')}")
    usage = reply.usage_metadata or {}
    # max_tokens goes out as max_output_tokens: the model stops at it.
    expect(0 < usage.get("output_tokens", 0) <= MAX_TOKENS, f"usage {usage}")
    stored = client.responses.retrieve(meta["id"])
    expect(stored.output_text == text, f"the stored response says {stored.output_text!r}, LangChain {text!r}")
    ok(
        f"langchain: ChatOpenAI(use_responses_api=True).invoke: {meta['id']} {meta['status']} {text!r}, "
        f"{usage['output_tokens']} tokens"
    )


@check("langchain: ChatOpenAI(use_responses_api=True).stream")
def _():
    # skip_cache: the chat stream above asked the same, and an answer from the cache is replayed as one delta.
    llm = chat_openai(use_responses_api=True, extra_body={"skip_cache": True})
    chunks = list(llm.stream("Tell me a short story about an owl."))
    texts = [c.text for c in chunks if isinstance(c, AIMessageChunk) and c.text]
    expect(len(texts) > 1, f"{len(texts)} text chunks")
    total = chunks[0]
    for c in chunks[1:]:
        total += c
    expect(total.text == "".join(texts), "the chunks do not add up")
    usage = total.usage_metadata or {}
    expect(0 < usage.get("output_tokens", 0) <= MAX_TOKENS, f"usage {usage}")
    response_id = total.response_metadata.get("id") or total.id
    expect(str(response_id).startswith("resp_"), f"no response id: {total.response_metadata}, id {total.id}")
    stored = client.responses.retrieve(response_id)
    expect(stored.output_text == total.text, f"stored: {stored.output_text!r}, the chunks: {total.text!r}")
    ok(
        f"langchain: ChatOpenAI(use_responses_api=True).stream in {len(texts)} pieces, {total.text!r}, "
        f"stored as {response_id}"
    )


@check("langchain: ChatOpenAI(use_responses_api=True).bind_tools")
def _():
    llm = chat_openai(use_responses_api=True).bind_tools([get_weather], tool_choice="get_weather")
    reply = llm.invoke("What is the weather in Lisbon?")
    calls = reply.tool_calls
    expect(len(calls) == 1 and calls[0]["name"] == "get_weather", f"tool calls {calls}, content {reply.content!r}")
    expect(isinstance(calls[0]["args"].get("city"), str), f"args {calls[0]['args']}")
    ok(f"langchain: responses API bind_tools → tool call get_weather({calls[0]['args']}) id {calls[0]['id']}")


@check("langchain: OpenAIEmbeddings")
def _():
    embeddings = OpenAIEmbeddings(
        base_url=BASE_URL, api_key=API_KEY, model=EMBEDDING_MODEL, check_embedding_ctx_length=False, max_retries=0
    )
    documents = embeddings.embed_documents([*SIMILAR, UNRELATED])
    close, far = expect_similar_closer(documents, "embed_documents")
    query = embeddings.embed_query("Where is the cat sitting?")
    scores = [cosine(query, d) for d in documents]
    expect(max(scores[:2]) > scores[2], f"query scores {scores}")
    ok(f"langchain: OpenAIEmbeddings embed_documents (similar {close:.3f} > unrelated {far:.3f}), embed_query nearest a cat")


@check("langchain: an error carries pvai's message")
def _():
    # An account with no credits: 402 INSUFFICIENT_CREDITS, created through the admin API.
    request = urllib.request.Request(
        f"{URL}/admin/accounts",
        data=json.dumps(
            {"email": f"python-clients-{secrets.token_hex(4)}@example.com", "tier": "enterprise", "credits": 0}
        ).encode(),
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as res:
        broke_key = json.loads(res.read())["api_key"]
    body = {"model": CHAT_MODEL, "messages": [{"role": "user", "content": "hi"}], "user": "langchain-carol"}
    status, expected = raw_error("/chat/completions", body, key=broke_key)
    expect(status == 402, f"a chat with no credits is {status}")
    llm = ChatOpenAI(base_url=BASE_URL, api_key=broke_key, model=CHAT_MODEL, max_retries=0, model_kwargs={"user": "x"})
    try:
        llm.invoke("hi")
        raise AssertionError("a chat with no credits was answered")
    except openai.APIStatusError as err:
        expect_pvai_error(err, status, expected)
    ok(f"langchain: no credits → {status}: {expected['message']!r}")


if failures:
    print(f"python clients: {len(failures)} failed: {', '.join(failures)}")
    sys.exit(1)
print("python clients: all passed")
