# SPDX-License-Identifier: Apache-2.0
# An independent check of the digest rule (issue 10): tests/tools/digest_check.py,
# standard library only, with its own RFC 8785 serializer, recomputes every
# digest of a fresh `bench --record --manifest` manifest and the public
# KernelIndex record's published values. Skipped (77, with the reason) when
# there is no python3.
find_package(Python3 COMPONENTS Interpreter QUIET)
foreach(mode fresh public)
  if(mode STREQUAL "fresh")
    set(_args $<TARGET_FILE:ropegrad>)
  else()
    set(_args --public ${PROJECT_SOURCE_DIR}/tests/data/kernelindex/run-01a03529.manifest.json)
  endif()
  if(Python3_Interpreter_FOUND)
    add_test(NAME digest_check_${mode} COMMAND /usr/bin/env python3 ${PROJECT_SOURCE_DIR}/tests/tools/digest_check.py ${_args})
  else()
    add_test(NAME digest_check_${mode} COMMAND sh -c "echo 'skip: python3 not found, the independent digest check needs it'; exit 77")
  endif()
  set_tests_properties(digest_check_${mode} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
