# SPDX-License-Identifier: Apache-2.0
# python/: the ctypes layer against the CPU path (standard library only, no
# torch), with the library this build produced. The torch and GPU scripts in
# python/tests run on a machine with torch (see their headers).
#
# Not in a sanitizer build (ROPEGRAD_SANITIZE): an ASan-instrumented
# libropegrad.so cannot be loaded into an uninstrumented python3, because the
# ASan runtime must come first in the process. Those builds (scripts/sanitize.sh)
# register no python_* test; the normal build (scripts/test.sh) runs them.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND AND NOT ROPEGRAD_SANITIZE)
  add_test(NAME python_ctypes_cpu
    # Through env, not the absolute interpreter path found here: the build
    # also runs on the GPU machine (scripts/gpu-run.sh), whose python3 lives elsewhere.
    COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/python/tests/test_ctypes_cpu.py)
  set_tests_properties(python_ctypes_cpu PROPERTIES TIMEOUT 300
    ENVIRONMENT "ROPEGRAD_LIB=$<TARGET_FILE:libropegrad>")
  # How python3 -m ropegrad builds a cuda_cpp solution (its cache folder, the
  # local GPU's -gencode as the official packager adds it), its --verbose
  # progress lines, and a solution refused in one line when the machine lacks
  # what it needs (triton, the CUDA toolkit...): standard library only, no torch, no GPU.
  add_test(NAME python_impl_load COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/python/tests/test_impl_load.py)
  set_tests_properties(python_impl_load PROPERTIES TIMEOUT 60)
  # `pip install ./python` into a fresh venv (the wheel builds libropegrad
  # with CMake and carries it), then the installed package on its own: import,
  # one op on the CPU, the ctypes tests, $ROPEGRAD_LIB overriding (skipped,
  # with the reason, without venv/ensurepip or cmake).
  add_test(NAME python_pip_install
    COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/python/tests/test_pip_install.py)
  set_tests_properties(python_pip_install PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77
    ENVIRONMENT "ROPEGRAD_LIB=$<TARGET_FILE:libropegrad>")
  # The torch tests (CPU cases; CUDA ones too on a GPU machine) with the first
  # Python that has torch (run_with_torch.sh: ROPEGRAD_TORCH_PYTHON, .venv,
  # python3); skipped, with the reason, without one. eager_path: the eager calls
  # of the torch ops (ropegrad.torch.Eager) equal to the same calls through the dispatcher.
  foreach(t IN ITEMS torch_binding forward_torch eager_path)
    add_test(NAME python_${t}
      COMMAND sh ${PROJECT_SOURCE_DIR}/python/tests/run_with_torch.sh ${PROJECT_SOURCE_DIR}/python/tests/test_${t}.py)
    set_tests_properties(python_${t} PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77
      ENVIRONMENT "ROPEGRAD_LIB=$<TARGET_FILE:libropegrad>;PYTHONPATH=${PROJECT_SOURCE_DIR}/python")
  endforeach()
  # The real client: transformers' Llama and Qwen3 stock vs ropegrad.hf.use_ropegrad,
  # with the Python of ROPEGRAD_TORCH_PYTHON (a venv with torch >= 2 and
  # transformers: ROPEGRAD_WITH_HF=1 bash scripts/deps.sh makes .venv);
  # skipped, saying why, without one (a failure under ROPEGRAD_REQUIRE_HF=1, as in CI).
  # Unset or empty (a build configured before .venv was made): the
  # environment's, else .venv's when it is there.
  if(NOT ROPEGRAD_TORCH_PYTHON AND DEFINED ENV{ROPEGRAD_TORCH_PYTHON})
    set(ROPEGRAD_TORCH_PYTHON "$ENV{ROPEGRAD_TORCH_PYTHON}")
  elseif(NOT ROPEGRAD_TORCH_PYTHON AND EXISTS "${PROJECT_SOURCE_DIR}/.venv/bin/python")
    set(ROPEGRAD_TORCH_PYTHON "${PROJECT_SOURCE_DIR}/.venv/bin/python")
  endif()
  set(ROPEGRAD_TORCH_PYTHON "${ROPEGRAD_TORCH_PYTHON}" CACHE FILEPATH
      "A Python with torch >= 2 (and transformers, for the Hugging Face tests); empty: those tests skip" FORCE)
  # ropegrad's torch ops through torch.library (python/tests/test_torch_library.py):
  # opcheck on each (schema, fake implementation, autograd registration, AOT
  # dispatch), torch.compile(fullgraph=True) around them equal to eager, the
  # positions op equal to the table path; CUDA cases too on a GPU machine.
  # With the first Python that has torch (run_with_torch.sh); skipped without one.
  add_test(NAME python_torch_library
    COMMAND sh ${PROJECT_SOURCE_DIR}/python/tests/run_with_torch.sh ${PROJECT_SOURCE_DIR}/python/tests/test_torch_library.py)
  set(RG_TORCH_LIBRARY_ENV "ROPEGRAD_LIB=$<TARGET_FILE:libropegrad>" "PYTHONPATH=${PROJECT_SOURCE_DIR}/python")
  if(ROPEGRAD_TORCH_PYTHON)
    list(APPEND RG_TORCH_LIBRARY_ENV "ROPEGRAD_TORCH_PYTHON=${ROPEGRAD_TORCH_PYTHON}")
  endif()
  set_tests_properties(python_torch_library PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77
    ENVIRONMENT "${RG_TORCH_LIBRARY_ENV}")
  add_test(NAME python_hf_real_client
    COMMAND sh ${PROJECT_SOURCE_DIR}/python/tests/run_with_hf.sh
            ${PROJECT_SOURCE_DIR}/python/tests/test_hf_real_client.py)
  set_tests_properties(python_hf_real_client PROPERTIES TIMEOUT 1500 SKIP_RETURN_CODE 77
    ENVIRONMENT "ROPEGRAD_LIB=$<TARGET_FILE:libropegrad>;ROPEGRAD_TORCH_PYTHON=${ROPEGRAD_TORCH_PYTHON}")
  # The Hugging Face benchmarks run end to end at tiny sizes (--smoke; on the CPU here, Liger's arm
  # skipped with its reason): bench/hf_rope.py (the RoPE layer, every implementation) and
  # bench/hf_step.py (the training step, stock / ropegrad / Liger in interleaved rounds);
  # bench/host_overhead.py (the host time per call of each torch op's path) likewise.
  foreach(rg_bench hf_rope hf_step host_overhead)
    add_test(NAME python_${rg_bench}_smoke
      COMMAND sh ${PROJECT_SOURCE_DIR}/python/tests/run_with_hf.sh ${PROJECT_SOURCE_DIR}/bench/${rg_bench}.py
              --smoke --out ${CMAKE_CURRENT_BINARY_DIR}/${rg_bench}-smoke.json)
    set_tests_properties(python_${rg_bench}_smoke PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77
      ENVIRONMENT "ROPEGRAD_LIB=$<TARGET_FILE:libropegrad>;ROPEGRAD_TORCH_PYTHON=${ROPEGRAD_TORCH_PYTHON}")
  endforeach()
  # python3 -m ropegrad bench|check with Python implementations (a module's
  # function, solution files, exceptions, wrong shapes, the reference as a run,
  # reference-compile with torch >= 2) on the CPU, through build/libropegrad_cli.so,
  # with the first Python that has torch (run_with_torch.sh); skipped without one.
  set(RG_IMPL_TEST_ENV "ROPEGRAD_LIB=$<TARGET_FILE:libropegrad>" "ROPEGRAD_CLI_LIB=$<TARGET_FILE:ropegrad_cli>")
  if(ROPEGRAD_TORCH_PYTHON)
    list(APPEND RG_IMPL_TEST_ENV "ROPEGRAD_TORCH_PYTHON=${ROPEGRAD_TORCH_PYTHON}")
  endif()
  add_test(NAME python_impl_cpu COMMAND sh ${PROJECT_SOURCE_DIR}/python/tests/run_with_torch.sh
                                        ${PROJECT_SOURCE_DIR}/python/tests/test_impl_cpu.py)
  set_tests_properties(python_impl_cpu PROPERTIES TIMEOUT 1200 SKIP_RETURN_CODE 77 ENVIRONMENT "${RG_IMPL_TEST_ENV}")
endif()
