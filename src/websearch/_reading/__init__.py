"""Reading what a search finds: `fetch` (one URL to clean text, behind the SSRF checks) and
`research` (a question to cited context within a budget). Sits above the engine, whose store,
pacing and deadline it uses, and below the client, which offers it.
"""
