# SPDX-License-Identifier: Apache-2.0
# The op seam (scripts/op_seam.sh, docs/adding-an-op.md): 088 and 068
# (rope_apply and rope_apply_backward) and the apply from positions
# (rope_apply_pos, rope_apply_pos_backward) and the packed table ops
# (rope_apply_thd, rope_apply_thd_backward), which share code, counted together,
# are named by at most 3 files outside their folders, rows and tests, and no
# development switch is left in src/ or include/.
find_program(RG_BASH bash)
find_program(RG_GIT git)
if(RG_BASH AND RG_GIT AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  add_test(NAME op_seam_rope_apply
           COMMAND ${RG_BASH} ${PROJECT_SOURCE_DIR}/scripts/op_seam.sh rope_apply,rope_apply_backward,rope_apply_pos,rope_apply_pos_backward,rope_apply_thd,rope_apply_thd_backward 3)
  add_test(NAME op_seam_switches COMMAND ${RG_BASH} ${PROJECT_SOURCE_DIR}/scripts/op_seam.sh --switches)
endif()
