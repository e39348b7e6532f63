"""The engine: what runs one search across providers and shares it across agents.

The fallback chain and the line-up it walks, fan-out and fusion, the cache, single-flight
(`_flights`), provider health and cooldowns, pacing, and the `Engine` that puts them together
over a state store. Imports `_core`, `_http`, `_state` and `_providers`; never a face.
"""
