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
  # local GPU's -gencode as the official packager adds it) and its --verbose
  # progress lines: standard library only, no torch, no GPU.
  add_test(NAME python_impl_load COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/python/tests/test_impl_load.py)
  set_tests_properties(python_impl_load PROPERTIES TIMEOUT 60)
  # `pip install ./python` into a temporary --target, then the installed
  # package finding the library (skipped, with the reason, without pip).
  add_test(NAME python_pip_install
    COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/python/tests/test_pip_install.py)
  set_tests_properties(python_pip_install PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
    ENVIRONMENT "ROPEGRAD_LIB=$<TARGET_FILE:libropegrad>")
  # The torch binding's tests (CPU cases; CUDA ones too on a GPU machine) with
  # the first Python that has torch; skipped, with the reason, without one.
  add_test(NAME python_torch_binding
    COMMAND sh ${PROJECT_SOURCE_DIR}/python/tests/run_with_torch.sh
            ${PROJECT_SOURCE_DIR}/python/tests/test_torch_binding.py)
  set_tests_properties(python_torch_binding PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77
    ENVIRONMENT "ROPEGRAD_LIB=$<TARGET_FILE:libropegrad>")
  # The real client: transformers' Llama and Qwen3 stock vs ropegrad.hf.use_ropegrad,
  # with the Python of ROPEGRAD_TORCH_PYTHON (a venv with torch >= 2 and
  # transformers: ROPEGRAD_WITH_HF=1 bash scripts/deps.sh makes .venv-hf);
  # skipped, saying why, without one (a failure under ROPEGRAD_REQUIRE_HF=1, as in CI).
  if(NOT DEFINED ROPEGRAD_TORCH_PYTHON AND DEFINED ENV{ROPEGRAD_TORCH_PYTHON})
    set(ROPEGRAD_TORCH_PYTHON "$ENV{ROPEGRAD_TORCH_PYTHON}")
  elseif(NOT DEFINED ROPEGRAD_TORCH_PYTHON AND EXISTS "${PROJECT_SOURCE_DIR}/.venv-hf/bin/python")
    set(ROPEGRAD_TORCH_PYTHON "${PROJECT_SOURCE_DIR}/.venv-hf/bin/python")
  endif()
  set(ROPEGRAD_TORCH_PYTHON "${ROPEGRAD_TORCH_PYTHON}" CACHE FILEPATH
      "A Python with torch >= 2 and transformers, for the Hugging Face tests (empty: they skip)")
  add_test(NAME python_hf_real_client
    COMMAND sh ${PROJECT_SOURCE_DIR}/python/tests/run_with_hf.sh
            ${PROJECT_SOURCE_DIR}/python/tests/test_hf_real_client.py)
  set_tests_properties(python_hf_real_client PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77
    ENVIRONMENT "ROPEGRAD_LIB=$<TARGET_FILE:libropegrad>;ROPEGRAD_TORCH_PYTHON=${ROPEGRAD_TORCH_PYTHON}")
endif()

# python3 -m ropegrad bench|check with Python implementations (a module's
# function, solution files, exceptions, wrong shapes, the reference as a run)
# on the CPU, through build/libropegrad_cli.so. Twice: with the Python named by
# ROPEGRAD_TORCH_PYTHON (a venv with torch >= 2: reference-compile too; skipped
# with the reason when unset or absent), and with Debian's torch 1.13
# (run_with_torch.sh: the first Python that imports torch).
set(ROPEGRAD_TORCH_PYTHON "$ENV{ROPEGRAD_TORCH_PYTHON}" CACHE FILEPATH
  "A Python with torch >= 2 for the Python-implementation tests (empty: taken from the environment at test time)")
if(NOT ROPEGRAD_SANITIZE)
  set(RG_IMPL_TEST_ENV "ROPEGRAD_LIB=$<TARGET_FILE:libropegrad>" "ROPEGRAD_CLI_LIB=$<TARGET_FILE:ropegrad_cli>")
  if(ROPEGRAD_TORCH_PYTHON)
    list(APPEND RG_IMPL_TEST_ENV "ROPEGRAD_TORCH_PYTHON=${ROPEGRAD_TORCH_PYTHON}")
  endif()
  foreach(runner IN ITEMS run_with_torch_python run_with_torch)
    set(name python_impl_cpu)
    if(runner STREQUAL run_with_torch)
      set(name python_impl_cpu_debian_torch)
    endif()
    add_test(NAME ${name} COMMAND sh ${PROJECT_SOURCE_DIR}/python/tests/${runner}.sh
                                  ${PROJECT_SOURCE_DIR}/python/tests/test_impl_cpu.py)
    set_tests_properties(${name} PROPERTIES TIMEOUT 1200 SKIP_RETURN_CODE 77 ENVIRONMENT "${RG_IMPL_TEST_ENV}")
  endforeach()
endif()
