# Two entry points for a fresh machine: `make demo` (set up, then capture a real
# call through the broker and show it back) and `make test` (set up, then run
# the whole test suite). `make bench` runs the benchmarks, which CI skips.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup demo test test-py test-twin test-asyncio test-portable test-pi test-wheel bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py src/yarp/_validate_py.py src/yarp/_validate_services.py \
	$(wildcard src/yarp/*.pyx src/yarp/*.pxi)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip "setuptools>=77" wheel Cython
	$(BIN)/python -m pip install -q -e '.[test,export]'
	touch $(STAMP)

demo: setup
	$(BIN)/python examples/demo.py

test: test-py test-twin test-asyncio test-portable test-pi test-wheel

test-py: setup
	$(BIN)/python -m pytest -q -m 'not soak' tests

# The pure-Python twins end to end: the frame and payload paths, the broker and
# the bridge, with every child process inheriting YARP_NO_EXTENSIONS=1.
TWIN_TESTS := tests/test_fastframe.py tests/test_payload_kernel.py tests/test_broker_protocol.py \
	tests/test_broker_admission.py tests/test_ingest.py tests/test_replay.py tests/test_hostile_frames.py \
	tests/test_operations.py tests/test_store.py tests/test_run.py tests/test_twin_selection.py tests/test_scan.py tests/test_templates.py tests/test_lines.py \
	tests/test_shapes.py tests/test_result_view.py

test-twin: setup
	YARP_NO_EXTENSIONS=1 $(BIN)/python -m pytest -q -m 'not soak' $(TWIN_TESTS)

# The broker and the bridge once more on the standard library's event loop
# (the broker runs on uvloop by default).
ASYNCIO_TESTS := tests/test_broker_protocol.py tests/test_broker_admission.py tests/test_broker_lifecycle.py \
	tests/test_broker_ipc.py tests/test_ingest.py tests/test_replay.py tests/test_twin_selection.py \
	tests/test_result_view.py

test-asyncio: setup
	YARP_EVENT_LOOP=asyncio $(BIN)/python -m pytest -q -m 'not soak' $(ASYNCIO_TESTS)

# The kernels' portable branch that an x86-64 build skips: `_lines` built without SSE2 (a text's newlines
# eight bytes at a time), in a copy of the package, crossed with its twin.
PORTABLE := build/portable

test-portable: setup
	rm -rf $(PORTABLE) && mkdir -p $(PORTABLE) && cp -r src/yarp $(PORTABLE)/yarp
	rm -f $(PORTABLE)/yarp/_lines.c $(PORTABLE)/yarp/_lines*.so
	cd $(PORTABLE) && CFLAGS="-O2 -U__SSE2__" $(CURDIR)/$(BIN)/cythonize -i -q yarp/_lines.pyx > /dev/null
	PYTHONPATH=$(PORTABLE) $(BIN)/python -c "import yarp._lines as k; assert k.NEWLINE_BLOCKS == 'words', k.__file__"
	PYTHONPATH=$(PORTABLE) $(BIN)/python -m pytest -q -p no:cacheprovider tests/test_lines.py

test-pi: setup
	if [ -f hooks/pi/package.json ]; then cd hooks/pi && npm ci --no-audit --no-fund --silent && PATH="$(CURDIR)/$(BIN):$$PATH" npm test; fi

# What a user installs: the sdist, a wheel built from it, installed into a fresh
# venv outside the tree and driven from outside it (tests/installed/run.py).
test-wheel: setup
	$(BIN)/python tests/installed/run.py -q

bench: setup
	$(BIN)/python -m pytest -q bench --benchmark-columns=min,median,mean,ops

clean:
	rm -rf $(VENV) build src/*.egg-info src/yarp/_fastframe.c src/yarp/_fastframe*.so \
	src/yarp/_payload_kernel.c src/yarp/_payload_kernel*.so src/yarp/_validate.c src/yarp/_validate*.so \
	src/yarp/_scan.c src/yarp/_scan*.so src/yarp/_templates.c src/yarp/_templates*.so \
	src/yarp/_lines.c src/yarp/_lines*.so src/yarp/_shapes.c src/yarp/_shapes*.so
