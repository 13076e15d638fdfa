#!/usr/bin/env python3
"""LlamaIndex, unmodified, against a running pvai server: `OpenAILike` (llama-index-llms-openai-like) for chat
and `OpenAILikeEmbedding` (llama-index-embeddings-openai-like) for PV-EMBED, as their documentation shows.

    node test/contract/serve-for-contract.mjs --upstream none --models setup -- \\
      .tools/venv-llamaindex/bin/python test/clients/python/llamaindex_client.py

LlamaIndex needs openai 2.x, python_clients.py's pinned openai is 3.x: hence a venv of its own (.ci/run,
setup_python_llamaindex). Prints `ok …` or `FAIL …` per check; exits 1 when any failed.
"""

import math
import os
import sys
import traceback

import openai
from llama_index.core.llms import ChatMessage
from llama_index.core.tools import FunctionTool
from llama_index.embeddings.openai_like import OpenAILikeEmbedding
from llama_index.llms.openai_like import OpenAILike

BASE_URL = f"{os.environ['PVAI_URL']}/z1"
API_KEY = os.environ["PVAI_API_KEY"]
CHAT_MODEL = os.environ.get("PVAI_CHAT_MODEL", "PV-TURBO")
EMBEDDING_MODEL = os.environ.get("PVAI_EMBEDDING_MODEL_ID", "PV-EMBED")
MAX_TOKENS = 8

failures = []


def ok(message):
    print(f"ok   {message}")


def check(name):
    def run(fn):
        try:
            fn()
        except Exception as err:  # noqa: BLE001 - every failure is reported the same way
            failures.append(name)
            print(f"FAIL {name}: {type(err).__name__}: {err}")
            traceback.print_exc(limit=3, file=sys.stdout)
        return fn

    return run


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def llm(**overrides):
    settings = dict(
        model=CHAT_MODEL,
        api_base=BASE_URL,
        api_key=API_KEY,
        is_chat_model=True,
        is_function_calling_model=True,
        context_window=8192,
        max_tokens=MAX_TOKENS,
        temperature=0,
        max_retries=0,
        additional_kwargs={"user": "llama-dave"},
    )
    return OpenAILike(**{**settings, **overrides})


print(f"llama-index OpenAILike (openai {openai.__version__}) against {BASE_URL} ({CHAT_MODEL}, {EMBEDDING_MODEL})")


@check("llamaindex: complete and chat")
def _():
    completion = llm().complete("What is the capital of France?")
    expect(completion.text.strip(), f"no text: {completion!r}")
    reply = llm().chat([ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="Hi!")])
    expect(reply.message.role == "assistant" and (reply.message.content or "").strip(), f"chat: {reply!r}")
    ok(f"llamaindex: complete {completion.text!r}; chat {reply.message.content!r}")


@check("llamaindex: stream_chat")
def _():
    pieces = [r.delta for r in llm().stream_chat([ChatMessage(role="user", content="Tell me a story.")]) if r.delta]
    expect(len(pieces) > 1 and "".join(pieces).strip(), f"pieces {pieces}")
    ok(f"llamaindex: stream_chat in {len(pieces)} pieces, {''.join(pieces)!r}")


def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"sunny in {city}"


@check("llamaindex: chat_with_tools")
def _():
    model = llm()
    response = model.chat_with_tools([FunctionTool.from_defaults(fn=get_weather)], user_msg="Weather in Rome?")
    calls = model.get_tool_calls_from_response(response, error_on_no_tool_call=True)
    expect(len(calls) == 1 and calls[0].tool_name == "get_weather", f"calls {calls}")
    expect(isinstance(calls[0].tool_kwargs.get("city"), str), f"arguments {calls[0].tool_kwargs}")
    ok(f"llamaindex: chat_with_tools → get_weather({calls[0].tool_kwargs})")


@check("llamaindex: OpenAILikeEmbedding")
def _():
    embed = OpenAILikeEmbedding(model_name=EMBEDDING_MODEL, api_base=BASE_URL, api_key=API_KEY, max_retries=0)
    docs = embed.get_text_embedding_batch(
        ["The cat sat on the mat.", "A kitten is resting on the rug.", "Quarterly tax filings are due in March."]
    )
    expect(len(docs) == 3 and len({len(d) for d in docs}) == 1, f"{len(docs)} vectors")
    close, far = cosine(docs[0], docs[1]), max(cosine(docs[0], docs[2]), cosine(docs[1], docs[2]))
    expect(close > far, f"similar {close:.3f}, unrelated {far:.3f}")
    query = embed.get_query_embedding("Where is the cat sitting?")
    expect(cosine(query, docs[0]) > cosine(query, docs[2]), "the query is nearer the tax text than the cat")
    ok(f"llamaindex: OpenAILikeEmbedding ({len(docs[0])} dims): similar {close:.3f} > unrelated {far:.3f}")


@check("llamaindex: an error carries pvai's message")
def _():
    try:
        llm(model="PV-NOPE").complete("hi")
        raise AssertionError("an unknown model was answered")
    except openai.BadRequestError as err:
        message = err.body.get("message") if isinstance(err.body, dict) else None
        expect(message and "model" in message and message in str(err), f"error {err}")
    ok(f"llamaindex: unknown model → 400: {message!r}")


if failures:
    print(f"llamaindex: {len(failures)} failed: {', '.join(failures)}")
    sys.exit(1)
print("llamaindex: all passed")
