# The course's one build: GNU Make, incremental, -j safe, everything under build/.
#   make help      lists the targets
.DEFAULT_GOAL := all
SHELL := /bin/bash

NVCC      ?= nvcc
CC        := gcc
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v $(NVCC) 2>/dev/null))
BUILD     := build

# The chapters: every NN_topic directory. CHAPTERS="06_wgmma_tma 07" on the command line builds
# and tests only those (a chapter by its folder's name or its number); the rules of every chapter
# exist either way (06 links an object of 05). A word that names no chapter stops here, with the
# names that do.
ALL_CHAPTERS := $(sort $(wildcard [0-9][0-9]_*))
CHAPTERS := $(ALL_CHAPTERS)
override CHAPTERS := $(foreach c,$(CHAPTERS),$(or $(filter $(c) $(c)_%,$(ALL_CHAPTERS)),$(c)))
BAD_CHAPTERS := $(filter-out $(ALL_CHAPTERS),$(CHAPTERS))
$(if $(BAD_CHAPTERS),$(error CHAPTERS=$(BAD_CHAPTERS): no such chapter; the chapters are \
     $(ALL_CHAPTERS) (or their numbers: $(foreach c,$(ALL_CHAPTERS),$(firstword $(subst _, ,$(c)))))))

# Parallel by default: a first build compiles every stage for up to three architectures, one
# nvcc per core. `make -j1` (or any -j) on the command line still wins.
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif

# The GPU of this machine, if any (compute capability as "90"); empty without a driver (CI).
GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | \
                  head -n 1 | tr -d ' .')
# ARCH: which architecture to build. Default: the GPU's own (nvcc's "native": sm_86 on an
# RTX 30-series, sm_120 on an RTX 50-series; sm_90 means sm_90a, since the wgmma stages need the
# "a" target), else, with no GPU, all of sm_80 sm_89 sm_90a. `make ARCH=all` builds those three
# on any machine; `make ARCH=sm_NN` builds one (any architecture this nvcc knows).
ARCH_OF_GPU := $(if $(GPU_CC),$(if $(filter 90,$(GPU_CC)),sm_90a,sm_$(GPU_CC)),all)
ARCH      ?= $(ARCH_OF_GPU)
$(if $(filter all,$(ARCH))$(shell echo '$(ARCH)' | grep -Ex 'sm_[0-9]+[af]?'),,\
     $(error ARCH=$(ARCH): use all, or one architecture such as sm_80, sm_86, sm_89, sm_90a, sm_120))

# A file's architectures (docs/design.md, "Builds"): a file named *_sm90a.cu uses instructions
# that exist only on sm_90a (wgmma, setmaxnreg, TMA with wgmma), so it is compiled for sm_90a
# alone whatever ARCH says (its rows report "skip: needs sm_90a" on other GPUs); every other file
# for sm_80, sm_89 and sm_90a, or for ARCH alone. Those also carry PTX of their newest
# architecture (without the "a": compute_90 for all), which the driver compiles at the first run
# on a GPU newer than the list (Blackwell: sm_100, sm_120), and caches (~/.nv/ComputeCache).
ARCHS_all    := sm_80 sm_89 sm_90a
ARCHS_hopper := sm_90a
narrow     = $(if $(filter all,$(ARCH)),$(1),$(ARCH))
file_archs = $(if $(filter %_sm90a.cu,$(1)),$(ARCHS_hopper),$(call narrow,$(ARCHS_all)))
gencode    = $(foreach a,$(1),-gencode=arch=compute_$(a:sm_%=%),code=$(a))
ptx_of     = $(patsubst sm_%,compute_%,$(patsubst %a,%,$(patsubst %f,%,$(lastword $(1)))))
ptx_gencode  = -gencode=arch=$(call ptx_of,$(1)),code=$(call ptx_of,$(1))
file_gencode = $(call gencode,$(call file_archs,$(1))) \
               $(if $(filter %_sm90a.cu,$(1)),,$(call ptx_gencode,$(call file_archs,$(1))))

# The chapters' short names (01 .. 08): make run-01, check-01, ...
CHAPTER_NUMBERS := $(foreach c,$(ALL_CHAPTERS),$(firstword $(subst _, ,$(c))))
# A per-chapter target with a number that is no chapter (make run-9, check-99) stops here, before
# anything is built, with the forms that exist (make's own answer, "No rule to make target",
# says neither).
BAD_GOAL := $(firstword $(filter-out $(foreach t,run check sanitize compare profile diff,$(CHAPTER_NUMBERS:%=$(t)-%)), \
                          $(filter run-% check-% sanitize-% compare-% profile-% diff-%,$(MAKECMDGOALS))))
BAD_VERB := $(firstword $(subst -, ,$(BAD_GOAL)))
$(if $(BAD_GOAL),$(error make $(BAD_GOAL): no such chapter; the chapters are \
     $(foreach c,$(ALL_CHAPTERS),$(BAD_VERB)-$(firstword $(subst _, ,$(c))) ($(c)))))
# compare.sh takes the stage's name and puts your ex_ twin beside it: KERNEL=ex_NAME is a slip
# that would otherwise surface only after the chapter is built, as "no stage".
$(if $(and $(filter compare-%,$(MAKECMDGOALS)),$(filter ex_%,$(KERNEL))),\
     $(error KERNEL=$(KERNEL): compare takes the stage's name, without ex_: make \
     $(firstword $(filter compare-%,$(MAKECMDGOALS))) KERNEL=$(patsubst ex_%,%,$(KERNEL))))

# Objects remember the ARCH they were built for: a change of ARCH rebuilds them. A new ARCH is
# first checked against this nvcc (a dry run for each architecture: nvcc's own judgement, ~20 ms
# each), and only then stamped: a typo such as ARCH=sm_99 stops here with the valid values,
# instead of rewriting the stamp, failing in nvcc, and costing a rebuild of every object at the
# next make. nvcc is asked only when the stamp would change (a first build, a new ARCH), and
# make help, clean, plots, tables, progress, next and diff-NN (which build no kernel themselves:
# progress compiles a written exercise through a make of its own) neither ask it nor touch the stamp.
ARCH_STAMP := $(BUILD)/arch.stamp
NO_BUILD_GOALS := help clean plots tables progress next $(CHAPTER_NUMBERS:%=diff-%)
ifneq ($(if $(MAKECMDGOALS),$(filter-out $(NO_BUILD_GOALS),$(MAKECMDGOALS)),all),)
ifneq ($(shell cat $(ARCH_STAMP) 2>/dev/null),$(ARCH))
$(if $(shell command -v $(NVCC)),,$(error nvcc not found ($(NVCC)): put the CUDA Toolkit's bin/ \
     on PATH, or give NVCC=/path/to/nvcc))
ARCH_REFUSED := $(strip $(foreach a,$(call narrow,$(ARCHS_all)),$(if $(shell $(NVCC) --dryrun \
     -gencode=arch=compute_$(a:sm_%=%),code=$(a) -c -x cu /dev/null -o /dev/null >/dev/null \
     2>&1 && echo ok),,$(a))))
$(if $(ARCH_REFUSED),$(error ARCH=$(ARCH): this nvcc cannot build $(ARCH_REFUSED); use all \
     ($(ARCHS_all)) or one of $(strip $(shell $(NVCC) --list-gpu-code 2>/dev/null)) \
     (sm_90a, and from sm_100 an a or f suffix, where this nvcc has it)))
# make -n (a dry run, e.g. to print one object's nvcc command for another ARCH) must not restamp.
$(if $(findstring n,$(firstword -$(MAKEFLAGS))),,$(shell mkdir -p $(BUILD) && echo "$(ARCH)" >$(ARCH_STAMP)))
endif
endif
# The stamp is written above, as the Makefile is read; this rule is for make -n alone, which
# writes nothing: on a fresh clone it then shows the stamp and every object as to be made.
$(ARCH_STAMP):
	@mkdir -p $(@D) && echo "$(ARCH)" >$@

# Quiet by default: one line per file, "  NVCC  06_wgmma_tma/kernels/03_pipeline_sm90a.cu [sm_90a]",
# "  CC    common/args.c", "  LINK  build/bin/06_wgmma_tma"; make V=1 prints every command in
# full instead. The compilers' errors and warnings are their own output and show either way.
V ?= 0
ifeq ($(V),1)
Q :=
say :=
else
Q := @
say = @printf '  %-5s %s\n' '$(1)' '$(2)'
endif

CFLAGS    := -std=c11 -O2 -Wall -Wextra -Werror -Wno-format-truncation \
             -Wno-missing-field-initializers -MMD -MP -Icommon -I$(CUDA_HOME)/include
# A register spill is an error on the architectures the course is measured on; on another one
# (ARCH=sm_86, sm_120, ...) ptxas's register budget differs and a spill is allowed, not fatal:
# 03's cluster stage spills a few bytes on sm_120.
SPILLS_FATAL := $(if $(filter all sm_80 sm_89 sm_90a,$(ARCH)),-Xptxas -warn-spills)
NVCCFLAGS := -std=c++17 -O3 -lineinfo -MMD -MP -Icommon --Werror all-warnings \
             -Xcompiler -Wall,-Wextra,-Werror $(SPILLS_FATAL)
LDLIBS    := -lcublasLt -lcublas -lm
# Chapter binaries export their functions' names, so that --launchers can name the function each
# row calls (make progress finds an exercise's file by it).
EXPORT_DYNAMIC := -Xlinker --export-dynamic
# DEFINES="-DNAME ...": macros for nvcc. The chapters' A/B variants (NN_topic/ab.list, built and
# run by common/ab.sh) are a stage compiled with one of its documented switches.
NVCCFLAGS += $(DEFINES)

# from_csv_main.c is the main() of build/bin/from_csv, not a piece of the chapters' harness.
COMMON_C    := $(filter-out common/from_csv_main.c,$(wildcard common/*.c))
COMMON_CU   := $(wildcard common/*.cu)
COMMON_OBJS := $(COMMON_C:%.c=$(BUILD)/%.o) $(COMMON_CU:%.cu=$(BUILD)/%.o)
HOST_OBJS   := $(BUILD)/common/arch.o $(BUILD)/common/plot.o $(BUILD)/common/table_from.o $(BUILD)/common/args.o $(BUILD)/common/stats.o $(BUILD)/common/table.o \
               $(BUILD)/common/convert.o $(BUILD)/common/tensor_map.o

BINS        := $(CHAPTERS:%=$(BUILD)/bin/%)
# README tables and charts from saved CSVs, with no chapter built (make tables, make plots).
FROM_CSV    := $(BUILD)/bin/from_csv
SOLVED_BINS := $(CHAPTERS:%=$(BUILD)/bin/%.solved)
# The solved builds (every stage compiled again as its own exercise) are only ever run on a GPU:
# without one, make test leaves them out and tests/run.sh counts their tests as skipped.
TEST_SOLVED := $(if $(GPU_CC),$(SOLVED_BINS))
# Harness tests beyond the unit tests: the PTX wrappers' SASS (compiled, never run) and two GPU
# programs that print PASS/FAIL/SKIP lines (SKIP without a suitable GPU).
PTX_CUBINS  := $(patsubst tests/%.cu,$(BUILD)/tests/%.cubin,$(wildcard tests/*_wrappers_sm90a.cu)) \
               $(BUILD)/tests/compare_fixture_sm90a.cubin
TEST_PROGS  := $(BUILD)/bin/test_harness $(BUILD)/bin/test_fp8_convert $(BUILD)/bin/test_gemm_ref \
               $(BUILD)/bin/test_hopper

.PHONY: all help test bench plots tables clean progress next $(foreach c,$(ALL_CHAPTERS),run-$(firstword $(subst _, ,$(c))) \
        diff-$(firstword $(subst _, ,$(c))) \
        check-$(firstword $(subst _, ,$(c))) sanitize-$(firstword $(subst _, ,$(c))) \
        compare-$(firstword $(subst _, ,$(c))) \
        profile-$(firstword $(subst _, ,$(c))))

all: $(BINS)

help:
	@echo "make                 build every chapter (build/bin/NN_topic); the first build takes minutes"
	@echo "                     (the README's \"Building\" says how many)"
	@echo "make run-NN          run chapter NN's table: every stage, your exercises, the library"
	@echo "                     (KERNEL=\"float4 ex_float4\": only those rows; ARGS=\"--n 2^24\": any"
	@echo "                     option of build/bin/NN_topic --help). A failing binary's exit code is"
	@echo "                     make's \"Error N\" (3: no usable GPU); make itself then exits 2"
	@echo "make next            the first exercise not passed: the idea, the section to read, the file to"
	@echo "                     edit, the command that checks it (start here, and come back here)"
	@echo "make progress        every exercise in course order: TODO, written, PASS or FAIL; how many done"
	@echo "make diff-NN STAGE=k our stage k against the stage it builds on: the one idea it adds"
	@echo "make check-NN        check your exercises at the test shapes: PASS, FAIL or TODO (KERNEL=ex_name)"
	@echo "make test            build, unit tests, SASS checks, documents, and on a GPU every kernel at"
	@echo "                     the test shapes; the groups run in parallel (TEST_JOBS=N: at most N)"
	@echo "make bench           every chapter's benchmark sweep into results/NN_topic.{md,csv}"
	@echo "make plots           the charts the READMEs show: NN_topic/measured/*.svg from the CSVs beside"
	@echo "                     them (no GPU, no chapter built: build/bin/from_csv draws them)"
	@echo "make tables          the README and NOTES.md tables between <!-- table: ... --> markers, from"
	@echo "                     the measured CSVs (no GPU, no chapter built; make test fails where one differs)"
	@echo "make sanitize-NN     compute-sanitizer memcheck and racecheck at small shapes (KERNEL=name)"
	@echo "make compare-NN KERNEL=name   your ex_name kernel beside our stage name (give it without ex_):"
	@echo "                     registers, shared and local memory, SASS counts, hints (no GPU needed),"
	@echo "                     and the clock on a GPU"
	@echo "make profile-NN KERNEL=name   Nsight Compute on one kernel"
	@echo "make clean           remove build/"
	@echo "NN: $(CHAPTER_NUMBERS) ($(CHAPTERS))"
	@echo "options: CHAPTERS=\"02 07\" (make, test, bench, plots and tables on those chapters only,"
	@echo "         each by its number or folder name),"
	@echo "         ARCH=sm_NN (one architecture: sm_80, sm_86, sm_89, sm_90a, sm_120, ...; default:"
	@echo "         this machine's GPU, or sm_80 sm_89 sm_90a without one: now $(ARCH)), ARCH=all,"
	@echo "         NVCC=/path/to/nvcc, -jN (default: all cores), V=1 (every command in full),"
	@echo "         SGEMM_SWEEP=1 (04's tuned stage with all 21 tile configurations, to sweep them)"
	@echo "The SASS checks of make test and make compare-NN need cuobjdump and nvdisasm, which some"
	@echo "toolkit installs lack: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm (or install"
	@echo "the full CUDA Toolkit); without them make test skips those checks and says so at the end."

# ---- common ----------------------------------------------------------------------------------
$(BUILD)/common/%.o: common/%.c
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/common/%.o: common/%.cu $(ARCH_STAMP)
	@mkdir -p $(@D)
	$(call say,NVCC,$< [$(call file_archs,$<)])
	$(Q)$(NVCC) $(NVCCFLAGS) $(call file_gencode,$<) -c $< -o $@

# make run-NN / check-NN KERNEL="a b": --kernel a --kernel b (the rows to run; ex_NAME is your
# exercise), before ARGS.
KERNEL_ARGS = $(foreach k,$(KERNEL),--kernel $(k))
# A chapter binary run by make: the command is shown, and when the binary fails, a line in its
# own terms says why before make's "Error N". make cannot pass the code on: its own exit status
# is 2 for any failed recipe, and the binary's code is the N of that line (3: no usable GPU).
run_binary = @echo '$(subst ','\'',$(1))'; $(1) || { rc=$$?; case $$rc in 1) why="a kernel failed";; \
             2) why="bad usage";; 3) why="no usable GPU";; *) why="it crashed or was killed";; esac; \
             echo "make: $(firstword $(1)) exited $$rc: $$why (make reports Error $$rc, exits 2)" >&2; \
             exit $$rc; }

# ---- chapters ------------------------------------------------------------------------------------
# Each chapter: driver.c (C11) + kernels/*.cu (the stages) + exercises/*.cu (the skeletons),
# plus any NN_topic/*.cu beside the driver (library calls that need C++, such as CUB).
# NN_topic.solved links each stage a second time, compiled with -DSTAGE_AS_EXERCISE, in place
# of the exercises: make test runs it to prove the exercise plumbing accepts a right answer.
define chapter_rules
$(1)_KERNEL_SRC   := $$(sort $$(wildcard $(1)/kernels/*.cu))
$(1)_EXERCISE_SRC := $$(sort $$(wildcard $(1)/exercises/*.cu))
$(1)_KERNEL_OBJS  := $$($(1)_KERNEL_SRC:$(1)/%.cu=$(BUILD)/$(1)/%.o) \
                     $$(patsubst $(1)/%.cu,$(BUILD)/$(1)/%.o,$$(wildcard $(1)/*.cu))
$(1)_OBJS   := $(BUILD)/$(1)/driver.o $$($(1)_KERNEL_OBJS) $$($(1)_EXERCISE_SRC:$(1)/%.cu=$(BUILD)/$(1)/%.o)
$(1)_SOLVED := $(BUILD)/$(1)/driver.o $$($(1)_KERNEL_OBJS) $$($(1)_KERNEL_SRC:$(1)/kernels/%.cu=$(BUILD)/$(1)/solved/%.o)

$(BUILD)/bin/$(1): $$($(1)_OBJS) $(COMMON_OBJS)
	@mkdir -p $$(@D)
	$$(call say,LINK,$$@)
	$$(Q)$(NVCC) -o $$@ $$^ $(LDLIBS) $(EXPORT_DYNAMIC)

$(BUILD)/bin/$(1).solved: $$($(1)_SOLVED) $(COMMON_OBJS)
	@mkdir -p $$(@D)
	$$(call say,LINK,$$@)
	$$(Q)$(NVCC) -o $$@ $$^ $(LDLIBS) $(EXPORT_DYNAMIC)

$(BUILD)/$(1)/driver.o: $(1)/driver.c
	@mkdir -p $$(@D)
	$$(call say,CC,$$<)
	$$(Q)$(CC) $(CFLAGS) -I$(1) -c $$< -o $$@

$(BUILD)/$(1)/%.o: $(1)/%.cu $(ARCH_STAMP)
	@mkdir -p $$(@D)
	$$(call say,NVCC,$$< [$$(call file_archs,$$<)])
	$$(Q)$(NVCC) $(NVCCFLAGS) -I$(1) $$($(1)_INCLUDES) $$(OBJ_FLAGS) $$(call file_gencode,$$<) -c $$< -o $$@

$(BUILD)/$(1)/solved/%.o: $(1)/kernels/%.cu $(ARCH_STAMP)
	@mkdir -p $$(@D)
	$$(call say,NVCC,$$< [$$(call file_archs,$$<)] -DSTAGE_AS_EXERCISE)
	$$(Q)$(NVCC) $(NVCCFLAGS) -I$(1) $$($(1)_INCLUDES) $$(OBJ_FLAGS) -DSTAGE_AS_EXERCISE $$(call file_gencode,$$<) -c $$< -o $$@

run-$(firstword $(subst _, ,$(1))): $(BUILD)/bin/$(1)
	$$(call run_binary,$(BUILD)/bin/$(1) $$(KERNEL_ARGS) $$(ARGS))

check-$(firstword $(subst _, ,$(1))): $(BUILD)/bin/$(1)
	$$(call run_binary,$(BUILD)/bin/$(1) --check $$(KERNEL_ARGS) $$(ARGS))

# The library rows are left out (--no-library) and the references computed on the CPU: the
# sanitizer then judges our kernels alone (cuBLAS's own kernels gave racecheck hazards).
sanitize-$(firstword $(subst _, ,$(1))): $(BUILD)/bin/$(1)
	@echo "compute-sanitizer on our kernels at the --quick shapes; library rows left out (--no-library)"
	compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 $(BUILD)/bin/$(1) --test --quick --no-library $$(KERNEL_ARGS) $$(ARGS)
	compute-sanitizer --tool racecheck --error-exitcode 1 $(BUILD)/bin/$(1) --test --quick --no-library $$(KERNEL_ARGS) $$(ARGS)

# our stage STAGE against the stage it builds on (common/progress.sh diff); no build.
diff-$(firstword $(subst _, ,$(1))):
	@bash common/progress.sh diff $(1) "$$(STAGE)"

compare-$(firstword $(subst _, ,$(1))): $(BUILD)/bin/$(1)
	@test -n "$$(KERNEL)" || { echo "usage: make compare-$(firstword $(subst _, ,$(1))) KERNEL=name (see $(BUILD)/bin/$(1) --list)"; exit 2; }
	@BUILD=$(BUILD) bash common/compare.sh $(1) $$(KERNEL)
profile-$(firstword $(subst _, ,$(1))): $(BUILD)/bin/$(1)
	@test -n "$$(KERNEL)" || { echo "usage: make profile-$(firstword $(subst _, ,$(1))) KERNEL=name (see $(BUILD)/bin/$(1) --list)"; exit 2; }
	@sym=$$$$($(BUILD)/bin/$(1) --sass-spec | awk -F'\t' -v k="$$(KERNEL)" '$$$$2 == k { print $$$$4 }'); \
	 test -n "$$$$sym" || { echo "no kernel named '$$(KERNEL)' with a known symbol; see $(BUILD)/bin/$(1) --list"; exit 2; }; \
	 ncu --clock-control none --set detailed -k regex:"$$$$sym" --launch-count 1 $(BUILD)/bin/$(1) --kernel $$(KERNEL) --iters 1 --warmup 0 $$(ARGS)
endef
# Chapter 07's GEMM stages build on chapter 06's shared device and host pieces (gemm06_sm90a.cuh:
# the swizzled tile's descriptor, the tensor-map cache, the fragment store).
07_fp8_gemm_INCLUDES := -I06_wgmma_tma
# Chapter 08's stage 6 stages O for its TMA store with chapter 06's stage_box.
08_flash_attn_INCLUDES := -I06_wgmma_tma
$(foreach c,$(ALL_CHAPTERS),$(eval $(call chapter_rules,$(c))))

# Chapter 04's tuned stage compiles its sweep's configurations only on request, make
# SGEMM_SWEEP=1 (04's README, "Tuning notes"): all 21 took 86 s of one core, the longest object
# of the course. A stamp holds the choice, so that changing it rebuilds that object alone
# (OBJ_FLAGS: an object's own flags, in its recipe).
# The stamp is rewritten as the Makefile is read, where it would change (as the arch stamp, and
# for the same goals; never by make -n).
SGEMM_SWEEP ?= 0
SGEMM_SWEEP_STAMP := $(BUILD)/04_sgemm/sweep.stamp
SGEMM_SWEEP_OBJS := $(BUILD)/04_sgemm/kernels/10_tuned.o $(BUILD)/04_sgemm/solved/10_tuned.o
ifneq ($(if $(MAKECMDGOALS),$(filter-out $(NO_BUILD_GOALS),$(MAKECMDGOALS)),all),)
ifneq ($(shell cat $(SGEMM_SWEEP_STAMP) 2>/dev/null),$(SGEMM_SWEEP))
$(if $(findstring n,$(firstword -$(MAKEFLAGS))),,$(shell mkdir -p $(BUILD)/04_sgemm && echo "$(SGEMM_SWEEP)" >$(SGEMM_SWEEP_STAMP)))
endif
endif
$(SGEMM_SWEEP_OBJS): $(SGEMM_SWEEP_STAMP)
$(SGEMM_SWEEP_OBJS): OBJ_FLAGS := $(if $(filter 1,$(SGEMM_SWEEP)),-DSGEMM_SWEEP)
$(SGEMM_SWEEP_STAMP):
	@mkdir -p $(@D) && echo "$(SGEMM_SWEEP)" >$@

# Chapter 06's fp16 table times chapter 05's best mma.sync kernel on the same problem: its object
# file is linked into 06's binaries (its row in 06_wgmma_tma/driver.c).
$(BUILD)/bin/06_wgmma_tma $(BUILD)/bin/06_wgmma_tma.solved: $(BUILD)/05_hgemm_mma/kernels/08_final.o

# ---- tests and benchmarks ------------------------------------------------------------------------
$(BUILD)/bin/test_harness: tests/test_harness.c $(HOST_OBJS)
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) -L$(CUDA_HOME)/lib64 -lcudart -lm

# The host's e4m3 rounding against cuda_fp8.h's (C++, host code only: no GPU, no nvcc).
$(BUILD)/bin/test_fp8_convert: tests/test_fp8_convert.cpp $(BUILD)/common/convert.o common/harness.h
	@mkdir -p $(@D)
	$(call say,CXX,$<)
	$(Q)$(CXX) -std=c++17 -O2 -Wall -Wextra -Werror -Icommon -I$(CUDA_HOME)/include -o $@ $(filter %.cpp %.o,$^)

$(BUILD)/tests/test_gemm_ref.o: tests/test_gemm_ref.c
	@mkdir -p $(@D)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/bin/test_gemm_ref: $(BUILD)/tests/test_gemm_ref.o $(COMMON_OBJS)
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(NVCC) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/test_hopper_sm90a.o: tests/test_hopper_sm90a.cu $(ARCH_STAMP)
	@mkdir -p $(@D)
	$(call say,NVCC,$< [$(call file_archs,$<)])
	$(Q)$(NVCC) $(NVCCFLAGS) $(call file_gencode,$<) -c $< -o $@

$(BUILD)/bin/test_hopper: $(BUILD)/tests/test_hopper_sm90a.o $(COMMON_OBJS)
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(NVCC) -o $@ $^ $(LDLIBS)

# The wrappers' SASS test compiles kernels that use every wrapper, for sm_90a, to a cubin that
# tests/ptx_sass.sh reads with cuobjdump.
$(BUILD)/tests/%.cubin: tests/%.cu $(wildcard common/ptx/*.cuh)
	@mkdir -p $(@D)
	$(call say,NVCC,$< [sm_90a cubin])
	$(Q)$(NVCC) $(NVCCFLAGS) -cubin -gencode=arch=compute_90a,code=sm_90a $< -o $@

# NVCC goes along for the Makefile's own tests in run.sh, which run make without this one's flags.
test: $(BINS) $(TEST_SOLVED) $(TEST_PROGS) $(PTX_CUBINS) $(FROM_CSV)
	@NVCC='$(NVCC)' bash tests/run.sh $(CHAPTERS)

bench: $(BINS)
	@mkdir -p results
	@set -e; for c in $(CHAPTERS); do echo "== $$c"; $(BUILD)/bin/$$c --bench --save results/$$c; done

# The ladder charts the READMEs show (no GPU needed): each NN_topic/measured/NAME.svg that the
# chapter's README names, drawn from NAME.csv beside it, and no other (common/plots.sh reads the
# list from the READMEs; make test draws the same into a scratch folder and compares). Drawn by
# build/bin/from_csv: a few seconds on a fresh clone, no chapter built.
plots: $(FROM_CSV)
	@FROM_CSV=$(FROM_CSV) bash common/plots.sh $(CHAPTERS)

# The learner's path (common/progress.sh): every exercise's state, and the next one to do. They
# compile only the exercises written (each alone), and on a GPU link and check their chapters.
progress:
	@BUILD=$(BUILD) bash common/progress.sh progress $(CHAPTERS)

next:
	@BUILD=$(BUILD) bash common/progress.sh next $(CHAPTERS)

# The README tables: each block between <!-- table: CSV OPTIONS --> and <!-- /table --> printed
# again by --table-from (no GPU needed; common/readme_tables.sh, docs/design.md "README tables"),
# in the top README and each chapter's README.md and NOTES.md.
tables: $(FROM_CSV)
	@bash common/readme_tables.sh $< README.md $(foreach c,$(CHAPTERS),$(c)/README.md $(wildcard $(c)/NOTES.md))

$(FROM_CSV): $(BUILD)/common/from_csv_main.o $(BUILD)/common/table_from.o $(BUILD)/common/plot.o \
             $(BUILD)/common/table.o $(BUILD)/common/args.o
	@mkdir -p $(@D)
	$(call say,LINK,$@)
	$(Q)$(CC) -o $@ $^ -lm

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
