"""A local OpenAI-compatible chat-completions server for tests and benchmarks (issue 12).

``python -m coopeval.simserver --port 8765`` serves ``POST /v1/chat/completions`` on
127.0.0.1. Answers come from :mod:`coopeval.simserver.policy` (a seeded policy per model name
that answers every CoopEval decision kind validly, derived from the prompt); transport faults,
latency, the concurrency cap and the request log from :mod:`coopeval.simserver.server`.
litellm reaches it as ``openai/<name>`` with ``api_base: http://127.0.0.1:<port>/v1``.

Outside the package layers: nothing in coopeval imports it (import-linter contract).
"""
