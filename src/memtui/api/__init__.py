"""The HTTP maintenance API (issue 12, design seed 000 §24): FastAPI on uvicorn, ``memtui serve``.

A layer beside ``cli/``: it parses requests, calls the services and answers; no rule of its own.
"""
