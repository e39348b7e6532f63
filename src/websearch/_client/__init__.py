"""The client: `WebSearch`, which reads settings and environment, picks the state store and
transport, and gives the engine's searches to the library's callers (sync and async).
"""
