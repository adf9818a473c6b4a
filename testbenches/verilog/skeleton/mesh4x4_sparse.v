// mesh4x4_sparse (student skeleton, lab 5): the 4 x 4 output-stationary mesh of pe_sparse
// WITHOUT its input skew: every row of A (with its metadata) and every column of B enters in
// the same cycle, so only the diagonal of D comes out right. Put the skew of your lab 2 mesh
// back, with a delay line for the metadata beside A's (docs/course/lab5.md, "Student task").
//
// The reference description, for the design you build:
//
// A 4 x 4 output-stationary mesh of pe_sparse (2:4 sparse mode, w = 1) with its
// input skew.
//
// Each cycle with vld high the mesh takes one step: for each row i of the tile a kept A value
// (a_col, bits [16 i +: 16]) and its 2-bit index within its group of four (meta_col, bits
// [2 i +: 2]), and for each column j the B values of the step's group, four dense K positions
// (b_grp, column j in bits [64 j +: 64], lane l of it in bits [64 j + 16 l +: 16]). The two
// steps of a group carry the same four B lanes. Everything enters unskewed; the skew delays row
// i of A and its metadata by i cycles and column j of B by j cycles (the same delay lines as
// mesh4x4, the metadata's beside A's), so PE (i, j) meets a kept value, its index and the
// group's B lanes in the same cycle, k + i + j cycles after step k entered. In the mesh A and
// its metadata move right, B's four lanes down, one PE per cycle. load, c_flat, acc_flat and
// acc_vld_flat are those of mesh4x4. Port interface: docs/course/interfaces.md.
`timescale 1ns/1ps
`default_nettype none

module mesh4x4_sparse (
    input  wire           clk,
    input  wire           rst,
    input  wire           vld,
    input  wire [63:0]    a_col,
    input  wire [7:0]     meta_col,
    input  wire [255:0]   b_grp,
    input  wire           load,
    input  wire [511:0]   c_flat,
    output wire [511:0]   acc_flat,
    output wire [15:0]    acc_vld_flat
);
    // STUDENT: the skew goes here: row i of A and of its metadata delayed by i cycles, column j
    // of B (all four lanes) by j cycles, valid bits too. As given, every edge is fed directly.
    wire [15:0] a_edge [0:3];
    wire [1:0]  m_edge [0:3];
    wire        av_edge[0:3];
    wire [63:0] b_edge [0:3];
    wire        bv_edge[0:3];
    genvar e;
    generate
        for (e = 0; e < 4; e = e + 1) begin : edge_in
            assign a_edge[e] = a_col[16 * e +: 16]; assign av_edge[e] = vld;
            assign m_edge[e] = meta_col[2 * e +: 2];
            assign b_edge[e] = b_grp[64 * e +: 64]; assign bv_edge[e] = vld;
        end
    endgenerate

    // Links between PEs: ah/mh[i][j] the A value and its index entering PE (i, j) from the
    // left (j = 4: leaving the row), bw[i][j] the four B lanes entering it from above (i = 4:
    // leaving the column).
    wire [15:0] ah  [0:3][0:4];
    wire [1:0]  mh  [0:3][0:4];
    wire        ahv [0:3][0:4];
    wire [63:0] bw  [0:4][0:3];
    wire        bwv [0:4][0:3];

    genvar i, j;
    generate
        for (i = 0; i < 4; i = i + 1) begin : row
            assign ah[i][0]  = a_edge[i];
            assign mh[i][0]  = m_edge[i];
            assign ahv[i][0] = av_edge[i];
            assign bw[0][i]  = b_edge[i];
            assign bwv[0][i] = bv_edge[i];
            for (j = 0; j < 4; j = j + 1) begin : col
                pe_sparse u_pe (
                    .clk(clk), .rst(rst),
                    .a_in(ah[i][j]), .a_vld_in(ahv[i][j]), .meta_in(mh[i][j]),
                    .b_in(bw[i][j]), .b_vld_in(bwv[i][j]),
                    .load(load), .c_in(c_flat[32 * (4 * i + j) +: 32]),
                    .a_out(ah[i][j + 1]), .a_vld_out(ahv[i][j + 1]), .meta_out(mh[i][j + 1]),
                    .b_out(bw[i + 1][j]), .b_vld_out(bwv[i + 1][j]),
                    .acc(acc_flat[32 * (4 * i + j) +: 32]),
                    .acc_vld(acc_vld_flat[4 * i + j])
                );
            end
        end
    endgenerate
endmodule

`default_nettype wire
