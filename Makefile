# redraft: `make install` sets up .venv and runs the quickstart; `make test` runs the tests.
PY ?= .venv/bin/python

.PHONY: install test test-gpu bench lint acceptance clean fuzz

install:
	python3 -m venv .venv
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test]"
	$(PY) examples/quickstart.py

test:
	$(PY) -m pytest -q tests

# the differential fuzzer's long run: FUZZ_EXAMPLES=10000 make fuzz (counts by property, then
# one shrunk program per distinct failure; see tests/compiler/transforms/fuzz/run_fuzz.py)
fuzz:
	$(PY) tests/compiler/transforms/fuzz/run_fuzz.py

test-gpu:
	$(PY) -m pytest -q -m gpu tests

acceptance:
	$(PY) ../shared/acceptance/seed_examples.py
	$(PY) ../shared/acceptance/random_vectors.py

bench:
	$(PY) -m benchmarks.bench_eager
	$(PY) -m benchmarks.bench_ad
	$(PY) -m benchmarks.bench_kernels
	$(PY) -m benchmarks.bench_compile
	$(PY) -m benchmarks.bench_steps
	$(PY) -m benchmarks.bench_programs
	$(PY) -m benchmarks.bench_first_call
	$(PY) -m benchmarks.bench_matmul

lint:
	$(PY) -m ruff check --line-length 100 redraft compiler runtime kernels tests benchmarks \
		examples || echo "ruff not installed: pip install ruff"

clean:
	rm -rf build dist *.egg-info .pytest_cache
