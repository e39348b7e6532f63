"""The faces, the top layer: the command line, the MCP server, the tool's schema and argument
handling, rendering, the progress spinner, and `serve` (the REST and SearXNG-compatible HTTP
service). Each calls the client; nothing below imports a face.
"""
