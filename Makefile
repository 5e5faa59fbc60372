# Two entry points for a fresh machine: `make demo` (set up, then capture a real
# call through the broker and show it back) and `make test` (set up, then run
# the whole test suite). `make bench` runs the benchmarks, which CI skips.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup demo test test-py test-pi bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py src/yarp/_fastframe.pyx src/yarp/_validate.pyx src/yarp/_validate_py.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip "setuptools>=77" wheel Cython
	$(BIN)/python -m pip install -q -e '.[test,export]'
	touch $(STAMP)

demo: setup
	$(BIN)/python examples/demo.py

test: test-py test-pi

test-py: setup
	$(BIN)/python -m pytest -q -m 'not soak' tests

test-pi: setup
	if [ -f hooks/pi/package.json ]; then cd hooks/pi && npm ci --no-audit --no-fund --silent && PATH="$(CURDIR)/$(BIN):$$PATH" npm test; fi

bench: setup
	$(BIN)/python -m pytest -q bench --benchmark-columns=min,median,mean,ops

clean:
	rm -rf $(VENV) build src/*.egg-info src/yarp/_fastframe.c src/yarp/_fastframe*.so src/yarp/_validate.c src/yarp/_validate*.so
