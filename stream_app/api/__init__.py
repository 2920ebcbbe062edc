"""The read API (FastAPI): routes over a :class:`stream_app.hub.Hub`, the request guard and the
error answers, and the uvicorn server that runs it inside a host's event loop."""
