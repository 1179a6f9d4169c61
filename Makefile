# Makefile: builds bin/hmmc (the compiler) and build/libhmmrt.a (the runtime
# of generated programs), runs the demo and the tests.
#   make          build the compiler and the runtime
#   make demo     compile models/casino.hmm and score models/casino.fa
#   make test     unit, golden, differential, HMMER, CUDA-build and bad-input tests, then
#                 sanitize, valgrind and 60 s of each fuzzer (installs what is missing)
#   make models   regenerate models/globin.* from Debian's hmmer2 tutorial data
#   make dense    the dense example: a random 1,000-state model, compiled and run
#   make sanitize the unit, golden and differential tests with ASan and UBSan (build-asan/)
#   make valgrind hmmc on every model of models/ under valgrind: no errors, no leaks
#   make fuzz     each libFuzzer harness of tests/fuzz/ for FUZZ_SECONDS (build-fuzz/)
#   make badinput the catalogue of bad inputs (tests/badinput/run, tests/badinput/compiler)

CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter
BUILD   := build
# The compiler's own path: another build (BUILD=build-asan) names its own.
HMMC_BIN := bin/hmmc
FLEX    ?= flex
BISON   ?= bison

GRAMMAR_C   := $(BUILD)/grammar/parser.c $(BUILD)/grammar/lexer.c
GRAMMAR_O   := $(GRAMMAR_C:.c=.o)
# compiler/: one folder per stage (compiler/README.md); headers are included
# by their path below compiler/, e.g. "ir/ir.h".
COMPILER_SRC := $(wildcard compiler/*/*.c compiler/*/*/*.c)
COMPILER_H  := $(wildcard compiler/*/*.h compiler/*/*/*.h)
COMPILER_C  := $(filter-out compiler/driver/main.c,$(COMPILER_SRC))
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
GPU_CU      := $(wildcard runtime/gpu/*.cu)
GPU_O       := $(patsubst %.c,$(BUILD)/%.o,$(GPU_C)) $(patsubst %.cu,$(BUILD)/%.o,$(GPU_CU))
GPU_LIB     := $(if $(NVCC_PATH),$(BUILD)/libhmmrt_gpu.a)

INCLUDES := -Icompiler -I$(BUILD)/grammar -Iruntime

.PHONY: all demo test unit golden differential mpi deps clean
all: $(HMMC_BIN) $(BUILD)/libhmmrt.a $(GPU_LIB)

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

# hmmc links generated programs against the runtime of the build it belongs to.
$(BUILD)/compiler/%.o: compiler/%.c $(COMPILER_H) $(BUILD)/grammar/parser.h $(BUILD)/grammar/lexer.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -DHMMC_BUILD_DIR='"$(BUILD)"' $(INCLUDES) -c $< -o $@

$(BUILD)/runtime/%.o: runtime/%.c $(wildcard runtime/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -fopenmp -Iruntime -c $< -o $@

$(BUILD)/runtime/gpu/%.o: runtime/gpu/%.c $(wildcard runtime/*.h runtime/gpu/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -fopenmp -Iruntime -I$(CUDA_HOME)/include -c $< -o $@

# The kernels that are the same for every model (the forward-backward kernel of
# --train's E-step and posterior calls), compiled once, with the flags hmmc
# gives the kernels it writes (compiler/driver/build.c).
$(BUILD)/runtime/gpu/%.o: runtime/gpu/%.cu $(wildcard runtime/*.h runtime/gpu/*.h runtime/gpu/*.cuh)
	@mkdir -p $(@D)
	$(NVCC_PATH) -O3 -std=c++14 -gencode arch=compute_90,code=sm_90 \
		-gencode arch=compute_90,code=compute_90 -Iruntime $(NVCC_EXTRA) -c $< -o $@

# The float kernels of profiles as data with at most 13 nodes a lane, at ptxas
# -O1 as hmmc builds such specialised kernels (codegen/cuda/profile_tuning.h).
$(BUILD)/runtime/gpu/profile_data_regs_small.o: NVCC_EXTRA := -Xptxas -O1

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
$(HMMC_BIN): $(BUILD)/compiler/driver/main.o $(BUILD)/libhmmc.a $(BUILD)/libhmmrt.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $(BUILD)/compiler/driver/main.o $(BUILD)/libhmmc.a $(BUILD)/runtime/occupancy_rules.o -lm

$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(BUILD)/libhmmc.a $(BUILD)/libhmmrt.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -fopenmp $(INCLUDES) $< -o $@ $(BUILD)/libhmmc.a $(BUILD)/libhmmrt.a -lcmocka -lz -lm

$(BUILD)/tools/%: tests/tools/%.c $(wildcard tests/tools/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -Itests/tools $< -o $@ -lm

unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

golden: $(HMMC_BIN)
	@HMMC=$(HMMC_BIN) tests/golden/run

# The differential test: every model as pass_plan shapes it; every model with
# the C table shape forced, which must print the straight-line shape's
# numbers digit for digit; random models of thousands of states; arrows and
# matrices; extreme weights (1e-300 to 1e300, subnormals) in both shapes; the
# time-parallel scan of one sequence against one thread; dense models'
# batched CPU path (OpenBLAS) against the per-sequence one; and
# real observations (gaussians, mixtures) against hmmlearn and numpy, their
# posteriors and training against hmmlearn's.
differential: all $(TOOL_BIN)
	@HMMC=$(HMMC_BIN) DIFF_TOOLS=$(BUILD)/tools tests/differential/run
	@HMMC=$(HMMC_BIN) DIFF_TOOLS=$(BUILD)/tools DIFF_SKIP_SELFTEST=1 DIFF_HMMC_OPTIONS=--c-shape=table \
		DIFF_EXACT_OPTIONS=--c-shape=straight tests/differential/run
	@HMMC=$(HMMC_BIN) DIFF_TOOLS=$(BUILD)/tools tests/differential/large
	@HMMC=$(HMMC_BIN) DIFF_TOOLS=$(BUILD)/tools tests/differential/forms
	@HMMC=$(HMMC_BIN) DIFF_TOOLS=$(BUILD)/tools tests/differential/spans
	@HMMC=$(HMMC_BIN) DIFF_TOOLS=$(BUILD)/tools tests/differential/extreme
	@HMMC=$(HMMC_BIN) DIFF_TOOLS=$(BUILD)/tools tests/differential/scan
	@HMMC=$(HMMC_BIN) DIFF_TOOLS=$(BUILD)/tools tests/differential/scan-gpu
	@HMMC=$(HMMC_BIN) DIFF_TOOLS=$(BUILD)/tools tests/differential/scan-posterior
	@HMMC=$(HMMC_BIN) DIFF_TOOLS=$(BUILD)/tools tests/differential/posterior
	@HMMC=$(HMMC_BIN) DIFF_TOOLS=$(BUILD)/tools tests/differential/dense-blas
	@HMMC=$(HMMC_BIN) tests/differential/real-check
	@HMMC=$(HMMC_BIN) tests/differential/real-train

# The IR verifier (compiler/ir/ir_verify.c) checks the IR after sema and
# after every pass wherever the tests run hmmc.
# MPI: a program under Open MPI's mpirun, 3 ranks and 1 on the CPU, against
# one process (tests/mpi/run; docs/scale-out.md).
mpi: all $(TOOL_BIN)
	@HMMC=$(HMMC_BIN) DIFF_TOOLS=$(BUILD)/tools tests/mpi/run

test unit golden differential mpi hmmer cuda badinput sanitize valgrind fuzz fuzz-short: export HMMC_VERIFY_IR = 1

test: deps
	@scripts/install-hmmer
	@$(MAKE) --no-print-directory all $(UNIT_BIN) $(TOOL_BIN)
	@$(MAKE) --no-print-directory unit golden differential mpi hmmer cuda badinput
	@$(MAKE) --no-print-directory sanitize valgrind fuzz-short
	@echo "all tests passed"

# ---- sanitizers --------------------------------------------------------------
# The compiler (bin/hmmc-asan), runtime, unit tests and tools built with
# AddressSanitizer and UndefinedBehaviorSanitizer in build-asan/; UBSan aborts
# on the first error. Generated programs get the same flags (HMMC_CFLAGS).
# Failed allocations return NULL (allocator_may_return_null): hmmc and the
# runtime handle them, and the unit tests check that they do.
# The bad-input catalogue runs too, without its address-space limits.
# The differential suite runs once (not with the table shape forced, nor on
# the large models), on models/casino, 12 random models and the dense ones
# (DIFF_EXAMPLES, DIFF_MODELS) to keep the time reasonable: the globin
# profile's generated C takes minutes to build with the sanitizers.
SANITIZE_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
SANITIZE_MAKE := $(MAKE) --no-print-directory BUILD=build-asan HMMC_BIN=bin/hmmc-asan \
	CFLAGS="$(SANITIZE_FLAGS)" GPU_LIB=
.PHONY: sanitize valgrind fuzz fuzz-short fuzz-build
sanitize: deps
	+@$(SANITIZE_MAKE) all $(patsubst $(BUILD)/%,build-asan/%,$(UNIT_BIN) $(TOOL_BIN))
	@export HMMC_CFLAGS="$(SANITIZE_FLAGS)" DIFF_EXAMPLES=casino DIFF_MODELS=12 \
		BADINPUT_MEMORY_LIMITS=0 \
		ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
		LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitize/lsan.supp:print_suppressions=0; \
	$(SANITIZE_MAKE) unit golden badinput && \
	HMMC=bin/hmmc-asan DIFF_TOOLS=build-asan/tools tests/differential/run

# The catalogue of bad inputs beyond the golden tests: missing files, huge
# models, bad sequences, closed pipes, full disks (tests/badinput/run); bad
# -o and --emit-dir, interrupted and failed builds (tests/badinput/compiler);
# silent chains of 100,000 states and cycles of 10,000 (tests/badinput/passes).
.PHONY: badinput
badinput: $(HMMC_BIN) $(BUILD)/libhmmrt.a
	@HMMC=$(HMMC_BIN) tests/badinput/run && HMMC=$(HMMC_BIN) tests/badinput/compiler
	@$(MAKE) --no-print-directory $(BUILD)/tools/hmmref && HMMC=$(HMMC_BIN) REF=$(BUILD)/tools/hmmref tests/badinput/passes

# hmmc on every model under valgrind (tests/valgrind/run).
valgrind: $(HMMC_BIN) $(BUILD)/libhmmrt.a
	@HMMC=$(HMMC_BIN) tests/valgrind/run

# ---- fuzzing -----------------------------------------------------------------
# libFuzzer harnesses (tests/fuzz/fuzz_*.c) built by clang with ASan and UBSan
# in build-fuzz/. `make fuzz` runs each for FUZZ_SECONDS; `make test` runs
# each for FUZZ_TEST_SECONDS after replaying every kept crash input
# (tests/fuzz/regressions/). tests/fuzz/run says where findings go.
FUZZ_SECONDS ?= 1800
FUZZ_TEST_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_NAMES := frontend fasta real
FUZZ_MAKE := $(MAKE) --no-print-directory BUILD=build-fuzz HMMC_BIN=build-fuzz/bin/hmmc CC=$(FUZZ_CC) \
	CFLAGS="$(SANITIZE_FLAGS) -fsanitize=fuzzer-no-link" GPU_LIB=
fuzz-build: deps
	+@$(FUZZ_MAKE) $(patsubst %,build-fuzz/fuzz/fuzz_%,$(FUZZ_NAMES))
fuzz: fuzz-build
	@tests/fuzz/run $(FUZZ_SECONDS) $(FUZZ_NAMES)
fuzz-short: fuzz-build
	@tests/fuzz/run $(FUZZ_TEST_SECONDS) $(FUZZ_NAMES)

$(BUILD)/fuzz/%: tests/fuzz/%.c $(BUILD)/libhmmc.a $(BUILD)/libhmmrt.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fsanitize=fuzzer $(WARN) -fopenmp $(INCLUDES) $< -o $@ $(BUILD)/libhmmc.a $(BUILD)/libhmmrt.a -lz -lm

# Every kernel the CUDA backend writes, compiled by nvcc (CI has no GPU: the
# programs run on their CPU path there). The GPU check itself is tests/gpu/check.
.PHONY: cuda
cuda: all $(TOOL_BIN)
	@tests/cuda/run

# hmmc --import-hmmer against hmm2search (needs hmmer2 and hmmer: make test installs them).
.PHONY: hmmer models
hmmer: all $(TOOL_BIN)
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
	rm -rf $(BUILD) build-asan build-fuzz bin
