# Makefile: builds bin/hmmc (the compiler) and build/libhmmrt.a (the runtime
# of generated programs), runs the demo and the tests.
#   make          build the compiler and the runtime
#   make demo     compile models/casino.hmm and score models/casino.fa
#   make test     unit, golden, differential, HMMER and CUDA-build tests (installs what is missing)
#   make models   regenerate models/globin.* from Debian's hmmer2 tutorial data
#   make dense    the dense example: a random 1,000-state model, compiled and run

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter
BUILD   := build
FLEX    ?= flex
BISON   ?= bison

GRAMMAR_C   := $(BUILD)/grammar/parser.c $(BUILD)/grammar/lexer.c
GRAMMAR_O   := $(GRAMMAR_C:.c=.o)
COMPILER_C  := $(filter-out compiler/main.c,$(wildcard compiler/*.c))
COMPILER_O  := $(patsubst %.c,$(BUILD)/%.o,$(COMPILER_C)) $(GRAMMAR_O)
RUNTIME_C   := $(wildcard runtime/*.c)
RUNTIME_O   := $(patsubst %.c,$(BUILD)/%.o,$(RUNTIME_C))
UNIT_C      := $(wildcard tests/unit/test_*.c)
UNIT_BIN    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_C))
TOOL_C      := $(wildcard tests/tools/*.c)
TOOL_BIN    := $(patsubst tests/tools/%.c,$(BUILD)/tools/%,$(TOOL_C))

# libhmmrt_gpu.a, the GPU side of the runtime, for programs built with
# --target=cuda: C compiled by $(CC) against the CUDA headers, built only
# where nvcc is found, on PATH or in /usr/local/cuda/bin (CUDA_HOME defaults
# to the folder above its bin/).
NVCC        ?= nvcc
NVCC_PATH   := $(shell command -v $(NVCC) 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_HOME   ?= $(patsubst %/bin/,%,$(dir $(NVCC_PATH)))
GPU_C       := $(wildcard runtime/gpu/*.c)
GPU_O       := $(patsubst %.c,$(BUILD)/%.o,$(GPU_C))
GPU_LIB     := $(if $(NVCC_PATH),$(BUILD)/libhmmrt_gpu.a)

INCLUDES := -Icompiler -I$(BUILD)/grammar -Iruntime

.PHONY: all demo test unit golden differential deps clean
all: bin/hmmc $(BUILD)/libhmmrt.a $(GPU_LIB)

deps:
	@scripts/install-deps

$(BUILD)/grammar/parser.c $(BUILD)/grammar/parser.h &: grammar/parser.y
	@mkdir -p $(@D)
	$(BISON) -Wall -Werror --header=$(BUILD)/grammar/parser.h -o $(BUILD)/grammar/parser.c $<

$(BUILD)/grammar/lexer.c $(BUILD)/grammar/lexer.h &: grammar/lexer.l $(BUILD)/grammar/parser.h
	@mkdir -p $(@D)
	$(FLEX) --header-file=$(BUILD)/grammar/lexer.h -o $(BUILD)/grammar/lexer.c $<

# Generated scanners and parsers get the warnings they are known to trip turned off.
$(BUILD)/grammar/%.o: $(BUILD)/grammar/%.c $(BUILD)/grammar/parser.h $(BUILD)/grammar/lexer.h
	$(CC) $(CFLAGS) $(WARN) -Wno-sign-compare -Wno-unused-function $(INCLUDES) -c $< -o $@

$(BUILD)/compiler/%.o: compiler/%.c $(wildcard compiler/*.h) $(BUILD)/grammar/parser.h $(BUILD)/grammar/lexer.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) $(INCLUDES) -c $< -o $@

$(BUILD)/runtime/%.o: runtime/%.c $(wildcard runtime/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -fopenmp -Iruntime -c $< -o $@

$(BUILD)/runtime/gpu/%.o: runtime/gpu/%.c $(wildcard runtime/*.h runtime/gpu/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -fopenmp -Iruntime -I$(CUDA_HOME)/include -c $< -o $@

$(BUILD)/libhmmrt_gpu.a: $(GPU_O)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libhmmc.a: $(COMPILER_O)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libhmmrt.a: $(RUNTIME_O)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# hmmc -v shares the runtime's occupancy rules (runtime/occupancy_rules.c).
bin/hmmc: $(BUILD)/compiler/main.o $(BUILD)/libhmmc.a $(BUILD)/libhmmrt.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $(BUILD)/compiler/main.o $(BUILD)/libhmmc.a $(BUILD)/runtime/occupancy_rules.o -lm

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libhmmc.a $(BUILD)/libhmmrt.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -fopenmp $(INCLUDES) $< -o $@ $(BUILD)/libhmmc.a $(BUILD)/libhmmrt.a -lcmocka -lm

$(BUILD)/tools/%: tests/tools/%.c $(wildcard tests/tools/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -Itests/tools $< -o $@ -lm

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

golden: bin/hmmc
	@tests/golden/run

# The differential test three ways: every model as pass_plan shapes it; every
# model with the C table shape forced, which must print the straight-line
# shape's numbers digit for digit; and random models of thousands of states.
differential: all $(TOOL_BIN)
	@tests/differential/run
	@DIFF_SKIP_SELFTEST=1 DIFF_HMMC_OPTIONS=--c-shape=table DIFF_EXACT_OPTIONS=--c-shape=straight \
		tests/differential/run
	@tests/differential/large

test: deps
	@scripts/install-hmmer
	@$(MAKE) --no-print-directory all $(UNIT_BIN) $(TOOL_BIN)
	@$(MAKE) --no-print-directory unit golden differential hmmer cuda
	@echo "all tests passed"

# Every kernel the CUDA backend writes, compiled by nvcc (CI has no GPU: the
# programs run on their CPU path there). The GPU check itself is tests/gpu/check.
.PHONY: cuda
cuda: all $(TOOL_BIN)
	@tests/cuda/run

# hmmc --import-hmmer against hmm2search (needs hmmer2 and hmmer: make test installs them).
.PHONY: hmmer models
hmmer: all
	@tests/hmmer/run

# models/globin.hmm and models/globin.fa, from the HMMER2 tutorial data (scripts/make-models).
models: deps
	@scripts/install-hmmer
	@$(MAKE) --no-print-directory bin/hmmc
	@scripts/make-models

# the dense example: a random 1,000-state fully connected model (models/make-dense).
.PHONY: dense
dense: deps
	@$(MAKE) --no-print-directory all $(BUILD)/tools/gendense
	@models/make-dense 1000 $(BUILD)/dense

demo: deps
	@$(MAKE) --no-print-directory all
	bin/hmmc models/casino.hmm -o $(BUILD)/casino --target=c
	$(BUILD)/casino models/casino.fa

clean:
	rm -rf $(BUILD) bin
