#!/bin/bash
# Round 4, fourth session, third device call (issue 33): the roofline as in the second call,
# with the vec4 transpose and the 32 x 4 transpose built as named. Carry .gl and .devbin/r4s4c
# (release `gemm` of the working tree). Output: $OUT/roofline3.txt.
exec bash "$(dirname "$0")/round4_s4_device2.sh" .devbin/r4s4c roofline3.txt
