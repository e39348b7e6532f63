"""The HTTP stack: the aiohttp transport behind the `SendsRequests` protocol, the deferred
transport that loads it off the first call's path, server-sent events, and OAuth token refresh.
Imports only `_core`; loaded only when a search sends a request.
"""
