# vmerge: `make run` merges the bundled fixtures into a demo MP4; `make test` runs every test.
# Both install what is missing first (scripts/install-deps.sh).

# The Swift toolchain may live outside PATH (e.g. /opt/swift on these machines).
ifneq ($(wildcard /opt/swift/usr/bin/swift),)
export PATH := /opt/swift/usr/bin:$(PATH)
endif
SWIFT ?= swift
# FFMPEG_PREFIX=/path/to/ffmpeg-7.1 builds and tests against another FFmpeg install, in its own
# build folder (CI and `make test` use the system's).
ifdef FFMPEG_PREFIX
export PKG_CONFIG_PATH := $(FFMPEG_PREFIX)/lib/pkgconfig:$(PKG_CONFIG_PATH)
export LD_LIBRARY_PATH := $(FFMPEG_PREFIX)/lib:$(LD_LIBRARY_PATH)
SWIFT_FLAGS += --scratch-path .build/ffmpeg-$(notdir $(FFMPEG_PREFIX))
endif
DEMO_DIR := demo
FIXTURES := $(sort $(wildcard fixtures/[a-k]_*.mov))

.PHONY: all deps build release run test fixtures doctor format lint clean bench

all: build

deps:
	@bash scripts/install-deps.sh

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

release: deps
	$(SWIFT) build -c release $(SWIFT_FLAGS)

run: release
	@mkdir -p $(DEMO_DIR)
	$$($(SWIFT) build -c release $(SWIFT_FLAGS) --show-bin-path)/vmerge -y $(FIXTURES) -o $(DEMO_DIR)/demo.mp4
	@echo "demo: $(CURDIR)/$(DEMO_DIR)/demo.mp4"

test: deps
	$(SWIFT) build --build-tests $(SWIFT_FLAGS)
	$(SWIFT) test --disable-swift-testing $(SWIFT_FLAGS)

# Regenerates fixtures/*.mov with the ffmpeg CLI (deterministic; see fixtures/README.md).
fixtures: deps
	bash fixtures/make_fixtures.sh

# Prints the toolchain and the FFmpeg libraries vmerge builds and runs against.
doctor: build
	@$(SWIFT) --version 2>&1 | head -1
	@pkg-config --modversion libavformat libavcodec libavfilter libavutil libswscale libswresample | paste -sd' ' | sed 's/^/pkg-config: /'
	@$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/vmerge --version

# Times vmerge against the equivalent single ffmpeg command (~15 min on 2 cores; see BENCH.md).
# Inputs are generated once into bench-work/ (gitignored); options: make bench BENCH_ARGS="--sets A --rounds 1".
bench: release
	python3 bench/bench.py --vmerge $$($(SWIFT) build -c release $(SWIFT_FLAGS) --show-bin-path)/vmerge $(BENCH_ARGS)

# swift-format ships with the toolchain; style settings are in .swift-format.
format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift

lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

clean:
	rm -rf .build $(DEMO_DIR)
