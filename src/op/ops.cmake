# SPDX-License-Identifier: Apache-2.0
# The op folders: every directory under src/op/ is one op, named as its C API
# (src/op/rope_backward/: ropegrad_rope_backward_*), and its files go by name:
#   *.c                       the library (validation, float64 reference, CPU path)
#   *.cu                      the library when CUDA is built
#   cuda_stub.c               the library when it is not (its CUDA entry points
#                             returning ROPEGRAD_ERR_NO_CUDA after validation)
#   *_avx2.c, *_avx512.c      compiled for that instruction set (CMakeLists.txt)
#   *.cuh, *.h                its kernels and private headers (every .cuh is
#                             embedded for `ropegrad export-solution`)
# An op may include another's private header by its folder
# ("<other-op>/<header>.h": an op's backward may share its forward's layout code). Its tests are
# tests/op/<op>/ (tests/op/CMakeLists.txt); its row of the op table is the
# harness's, src/harness/ops/<op>.c (the library includes nothing of the
# harness). scripts/op_seam.sh checks the seam.

# Every op folder, sorted.
function(rg_op_folders out)
  file(GLOB _entries LIST_DIRECTORIES true CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/op/*)
  set(_dirs)
  foreach(e ${_entries})
    if(IS_DIRECTORY ${e})
      list(APPEND _dirs ${e})
    endif()
  endforeach()
  list(SORT _dirs)
  set(${out} ${_dirs} PARENT_SCOPE)
endfunction()

# The library's sources of one op folder, with or without CUDA.
function(rg_op_library_sources dir with_cuda out)
  file(GLOB _c CONFIGURE_DEPENDS ${dir}/*.c)
  list(FILTER _c EXCLUDE REGEX "/cuda_stub\\.c$")
  if(with_cuda)
    file(GLOB _cu CONFIGURE_DEPENDS ${dir}/*.cu)
    list(APPEND _c ${_cu})
  elseif(EXISTS ${dir}/cuda_stub.c)
    list(APPEND _c ${dir}/cuda_stub.c)
  endif()
  set(${out} ${_c} PARENT_SCOPE)
endfunction()
