"""The warm dev session: its process (server.py), how it is reached (protocol.py), the scenarios it knows (catalog.py)."""
