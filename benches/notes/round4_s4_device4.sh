#!/bin/bash
# Round 4, fourth session, fourth device call (issue 33): the roofline with the vec4 transposes
# of 2 and 4 vec4s per invocation added. Carry .gl and .devbin/r4s4d (release `gemm` of the
# working tree). Output: $OUT/roofline4.txt.
exec bash "$(dirname "$0")/round4_s4_device2.sh" .devbin/r4s4d roofline4.txt
