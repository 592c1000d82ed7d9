# The repair environment's OpenEnv server (what `openenv validate` builds for its runtime checks); any command runs
# in it too, e.g. `docker run IMAGE dataenvgym teach --env skill-tree --domain math --seed 0` (tests/test_release.py).
FROM python:3.11-slim
WORKDIR /app
COPY . .
# PyTorch's CPU build first: on Linux, pip would otherwise pull the multi-GB CUDA one
RUN pip install --no-cache-dir torch --index-url https://download.pytorch.org/whl/cpu && pip install --no-cache-dir ".[serve]"
EXPOSE 8000
CMD ["uvicorn", "dataenvgym.repair.serve:app", "--host", "0.0.0.0", "--port", "8000"]
