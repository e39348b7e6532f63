"""Core types, the bottom layer: what every other layer speaks in and nothing below it.

The response and parameter types, notices, settings and their checkers, the provider registry
rows, credentials, the clock and dates, the per-search `ProviderContext`, the HTTP request and
response values (`_wire`), and small leaves (fork hooks, an LRU, the environment view). A module
here imports only `websearch.errors` and other modules here (tests/test_layers.py).
"""
