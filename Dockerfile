# The repair environment's OpenEnv server (what `openenv validate` builds for its runtime checks).
FROM python:3.11-slim
WORKDIR /app
COPY . .
RUN pip install --no-cache-dir ".[serve]"
EXPOSE 8000
CMD ["uvicorn", "dataenvgym.repair.serve:app", "--host", "0.0.0.0", "--port", "8000"]
