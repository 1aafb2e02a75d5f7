/*
 * The ceiling GEMM of issue 33: C [M, N] (f32) = A [M, K] (f16) B [K, N] (f16), all row-major,
 * on tensor cores through GL_KHR_cooperative_matrix.
 *
 * Written after NVIDIA's sample jeffbolznv/vk_cooperative_matrix_perf, shaders/shmem.comp
 * (commit cc3f225; MIT licence, notice below), keeping its technique: 256 invocations as 4 x 2
 * subgroups of 32, a TILE_M x TILE_N tile of C per workgroup, K walked TILE_K at a time through
 * workgroup memory, 128-bit (uvec4) loads and stores, rows of the workgroup tiles padded by 16
 * bytes against bank conflicts, and the next K slice loaded into registers while the current
 * one is multiplied. Changed for wgpu's SPIR-V passthrough, which has neither specialization
 * constants nor buffer device addresses:
 *   - TILE_M, TILE_N, TILE_K are preprocessor definitions (one module per tile, see
 *     compile.sh); the 16x16x16 multiply-add shape is fixed (f16 inputs, f32 accumulators);
 *   - M, N, K come from a uniform at binding 0 (the layout of wgsl_gemm::GemmDims), the
 *     operands from storage buffers at bindings 1 (A), 2 (B) and 3 (C), as the DSL kernels
 *     bind them; strides are K (A) and N (B, C);
 *   - C = A B is stored (the sample computes alpha A B + beta C and reads C);
 *   - B is row-major only.
 * M must be a multiple of TILE_M, N of TILE_N and K of TILE_K (checked by the host:
 * wgsl_gemm::ceiling); nothing is bounds-checked here.
 *
 * SPDX-FileCopyrightText: Copyright (c) 2019-2025 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
 * SPDX-License-Identifier: MIT
 *
 * Permission is hereby granted, free of charge, to any person obtaining a
 * copy of this software and associated documentation files (the "Software"),
 * to deal in the Software without restriction, including without limitation
 * the rights to use, copy, modify, merge, publish, distribute, sublicense,
 * and/or sell copies of the Software, and to permit persons to whom the
 * Software is furnished to do so, subject to the following conditions:
 *
 * The above copyright notice and this permission notice shall be included in
 * all copies or substantial portions of the Software.
 *
 * THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 * IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 * FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.  IN NO EVENT SHALL
 * THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 * LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING
 * FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER
 * DEALINGS IN THE SOFTWARE.
 */
#version 450 core
#pragma use_vulkan_memory_model
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_control_flow_attributes : enable

// TILE_M, TILE_N, TILE_K: set on the command line (-DTILE_M=128 ...).
const uint lM = 16;
const uint lN = 16;
const uint lK = 16;

// One row of A's workgroup tile is a K slice; B's tile is TILE_K rows of TILE_N.
const uint A_ROW_LEN = TILE_K;
const uint A_NUM_ROWS = TILE_M;
const uint B_ROW_LEN = TILE_N;
const uint B_NUM_ROWS = TILE_K;

layout(set = 0, binding = 0, std140) uniform Dims { uint M; uint N; uint K; uint pad; } dims;
layout(set = 0, binding = 1, std430) readonly buffer InputA { uvec4 x[]; } inputA;
layout(set = 0, binding = 2, std430) readonly buffer InputB { uvec4 x[]; } inputB;
layout(set = 0, binding = 3, std430) buffer Output { float x[]; } outputC;

const uint ELEMENTS_PER_VEC4 = 8; // 16 bytes of f16
const uint ROW_PAD_SH = ELEMENTS_PER_VEC4;

// Workgroup tiles, each row skewed by ROW_PAD_SH elements (16 bytes) against bank conflicts.
shared uvec4 Ash[A_NUM_ROWS * (A_ROW_LEN + ROW_PAD_SH) / ELEMENTS_PER_VEC4];
shared uvec4 Bsh[B_NUM_ROWS * (B_ROW_LEN + ROW_PAD_SH) / ELEMENTS_PER_VEC4];

const uint WORKGROUP_WIDTH_IN_SUBGROUPS = 4;
const uint WORKGROUP_HEIGHT_IN_SUBGROUPS = 2;
const uint NUM_SUBGROUPS = WORKGROUP_WIDTH_IN_SUBGROUPS * WORKGROUP_HEIGHT_IN_SUBGROUPS;
const uint SUBGROUP_SIZE = 32;
const uint INVOCATIONS_PER_WORKGROUP = SUBGROUP_SIZE * NUM_SUBGROUPS;
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;
const uint C_ROWS = TILE_M / WORKGROUP_HEIGHT_IN_SUBGROUPS / lM;
const uint C_COLS = TILE_N / WORKGROUP_WIDTH_IN_SUBGROUPS / lN;
coopmat<float, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator> result[C_ROWS][C_COLS];

void main()
{
    const uint strideA = dims.K;
    const uint strideB = dims.N;
    const uint strideC = dims.N;
    const uint K = dims.K;

    uvec2 tileID = uvec2(gl_WorkGroupID.xy);
    uvec2 warpInTile = uvec2(gl_SubgroupID % WORKGROUP_WIDTH_IN_SUBGROUPS, gl_SubgroupID / WORKGROUP_WIDTH_IN_SUBGROUPS);

    [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
        [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
            result[i][j] = coopmat<float, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator>(0.0);
        }
    }

    // Fetch the first K slice of A into registers.
    const uint INVS_PER_ROW_A = A_ROW_LEN / ELEMENTS_PER_VEC4;
    const uint ROWS_PER_PASS_A = INVOCATIONS_PER_WORKGROUP / INVS_PER_ROW_A;
    uint atilek = ELEMENTS_PER_VEC4 * (gl_LocalInvocationID.x % INVS_PER_ROW_A);
    uvec4 temp_A[A_NUM_ROWS / ROWS_PER_PASS_A];
    uint gabase = strideA * TILE_M * tileID.y;
    [[unroll]] for (uint i = 0; i < A_NUM_ROWS; i += ROWS_PER_PASS_A) {
        uint atilei = i + gl_LocalInvocationID.x / INVS_PER_ROW_A;
        temp_A[i / ROWS_PER_PASS_A] = inputA.x[(gabase + strideA * atilei + atilek) / ELEMENTS_PER_VEC4];
    }

    // Fetch the first K slice of B.
    const uint INVS_PER_ROW_B = B_ROW_LEN / ELEMENTS_PER_VEC4;
    const uint ROWS_PER_PASS_B = INVOCATIONS_PER_WORKGROUP / INVS_PER_ROW_B;
    uint btilej = ELEMENTS_PER_VEC4 * (gl_LocalInvocationID.x % INVS_PER_ROW_B);
    uvec4 temp_B[B_NUM_ROWS / ROWS_PER_PASS_B];
    uint gbbase = TILE_N * tileID.x;
    [[unroll]] for (uint k = 0; k < B_NUM_ROWS; k += ROWS_PER_PASS_B) {
        uint btilek = k + gl_LocalInvocationID.x / INVS_PER_ROW_B;
        temp_B[k / ROWS_PER_PASS_B] = inputB.x[(gbbase + strideB * btilek + btilej) / ELEMENTS_PER_VEC4];
    }

    const uint STRIDE_A_SH = A_ROW_LEN + ROW_PAD_SH;
    const uint STRIDE_B_SH = B_ROW_LEN + ROW_PAD_SH;

    for (uint chunkK = 0; chunkK < K; chunkK += TILE_K) {
        bool last = (chunkK + TILE_K) >= K;

        // Every subgroup has finished reading the previous slice from workgroup memory.
        barrier();

        [[unroll]] for (uint i = 0; i < A_NUM_ROWS; i += ROWS_PER_PASS_A) {
            uint si = i + gl_LocalInvocationID.x / INVS_PER_ROW_A;
            Ash[(STRIDE_A_SH * si + atilek) / ELEMENTS_PER_VEC4] = temp_A[i / ROWS_PER_PASS_A];
        }
        [[unroll]] for (uint k = 0; k < B_NUM_ROWS; k += ROWS_PER_PASS_B) {
            uint sk = k + gl_LocalInvocationID.x / INVS_PER_ROW_B;
            Bsh[(STRIDE_B_SH * sk + btilej) / ELEMENTS_PER_VEC4] = temp_B[k / ROWS_PER_PASS_B];
        }

        // The slice is in workgroup memory; the barrier comes before the next slice's loads so
        // that it does not wait for them.
        barrier();

        // Load the next K slice into registers while this one is multiplied.
        uint gabase = strideA * TILE_M * tileID.y + chunkK + TILE_K;
        [[unroll]] for (uint i = 0; i < A_NUM_ROWS; i += ROWS_PER_PASS_A) {
            uint atilei = i + gl_LocalInvocationID.x / INVS_PER_ROW_A;
            if (!last) temp_A[i / ROWS_PER_PASS_A] = inputA.x[(gabase + strideA * atilei + atilek) / ELEMENTS_PER_VEC4];
        }
        uint gbbase = strideB * (chunkK + TILE_K) + TILE_N * tileID.x;
        [[unroll]] for (uint k = 0; k < B_NUM_ROWS; k += ROWS_PER_PASS_B) {
            uint btilek = k + gl_LocalInvocationID.x / INVS_PER_ROW_B;
            if (!last) temp_B[k / ROWS_PER_PASS_B] = inputB.x[(gbbase + strideB * btilek + btilej) / ELEMENTS_PER_VEC4];
        }

        [[unroll]] for (uint k = 0; k < TILE_K / lK; ++k) {
            uint sk = lK * k;
            coopmat<float16_t, gl_ScopeSubgroup, lM, lK, gl_MatrixUseA> matA[C_ROWS];
            [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
                uint si = lM * (C_ROWS * warpInTile.y + i);
                coopMatLoad(matA[i], Ash, (STRIDE_A_SH * si + sk) / ELEMENTS_PER_VEC4, STRIDE_A_SH / ELEMENTS_PER_VEC4, gl_CooperativeMatrixLayoutRowMajor);
            }
            coopmat<float16_t, gl_ScopeSubgroup, lK, lN, gl_MatrixUseB> matB;
            [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
                uint sj = lN * (C_COLS * warpInTile.x + j);
                coopMatLoad(matB, Bsh, (STRIDE_B_SH * sk + sj) / ELEMENTS_PER_VEC4, STRIDE_B_SH / ELEMENTS_PER_VEC4, gl_CooperativeMatrixLayoutRowMajor);
                [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
                    result[i][j] = coopMatMulAdd(matA[i], matB, result[i][j]);
                }
            }
        }
    }

    [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
        uint gi = TILE_M * tileID.y + lM * (C_ROWS * warpInTile.y + i);
        [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
            uint gj = TILE_N * tileID.x + lN * (C_COLS * warpInTile.x + j);
            coopMatStore(result[i][j], outputC.x, strideC * gi + gj, strideC, gl_CooperativeMatrixLayoutRowMajor);
        }
    }
}
