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
EXPOSE 8765
CMD ["foldmem", "worker"]
