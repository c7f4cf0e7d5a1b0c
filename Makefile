# Thin wrapper around CMake + CTest. `make` builds build/libheapsift.so and build/heapsift.
PREFIX ?= /usr/local
BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# CI builds with -Werror (CI=true is set there).
WERROR := $(if $(CI),ON,OFF)

.PHONY: all configure setup demo test test-sanitize install format format-check clean bench mutate

all: configure
	cmake --build $(BUILD) -j $(JOBS)

# A configure that failed leaves nothing behind that breaks the next command (a cache
# without a Makefile made every later make fail in CMake's "No rule to make target"); a
# missing build dependency is named with the command that installs it.
configure:
	@sh scripts/check_deps.sh
	@test -f $(BUILD)/Makefile || { rm -rf $(BUILD)/CMakeCache.txt $(BUILD)/CMakeFiles; \
	    cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	    -DCMAKE_INSTALL_PREFIX=$(PREFIX) -DHS_WERROR=$(WERROR) || \
	    { rm -rf $(BUILD)/CMakeCache.txt $(BUILD)/CMakeFiles; \
	      echo "heapsift: configure failed; run 'make setup' (or 'make demo') first" >&2; exit 1; }; }

setup:
	@sh scripts/setup.sh

demo: setup all
	@sh examples/demo.sh $(BUILD)

test: setup all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The CLI and the unit tests built with ASan and UBSan (any report fails its test), in a
# build directory of their own; the preloaded library stays uninstrumented.
test-sanitize: setup
	@test -f $(BUILD)-sanitize/Makefile || cmake -S . -B $(BUILD)-sanitize \
	    -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DHS_WERROR=$(WERROR) -DHS_SANITIZE=ON
	cmake --build $(BUILD)-sanitize -j $(JOBS)
	cd $(BUILD)-sanitize && ctest --output-on-failure -j $(JOBS)

install: all
	cmake --install $(BUILD) --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cc')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h' '*.cc')

# Mutation check (not part of `make test`): builds a scratch copy of the tree and prints,
# for each known bug in scripts/mutate.sh, whether the tests named for it catch it.
mutate: setup
	sh scripts/mutate.sh .

bench: setup all
	sh bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD)
