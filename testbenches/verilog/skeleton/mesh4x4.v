// mesh4x4 (student skeleton, lab 2): the 4 x 4 output-stationary mesh of pe WITHOUT its input
// skew: every row of A and every column of B enters in the same cycle, so only the diagonal
// of D comes out right. Put the skew back (docs/course/lab2.md, "Student task").
//
// The reference description, for the design you build:
//
// Each cycle with vld high the mesh takes one column of the A tile (a_col: row i in bits
// [16 i +: 16]) and one row of the B tile (b_row: column j in bits [16 j +: 16]), both
// unskewed. The skew delays row i of A by i cycles and column j of B by j cycles, so PE (i, j)
// meets A[i][k] and B[k][j] in the same cycle, k + i + j cycles after step k entered; A moves
// right and B down one PE per cycle (the wavefront). load (one cycle, before the first step)
// preloads C into every accumulator (c_flat: PE (i, j) in bits [32 (4 i + j) +: 32]); acc_flat
// shows every accumulator in the same layout, and acc_vld_flat[4 i + j] is PE (i, j)'s acc_vld
// (its accumulator shows a step's sum this cycle). Port interface: docs/course/interfaces.md. The last step lands in PE (3, 3) 3 + 3 cycles
// (skew and wavefront) plus 2 cycles (the PE's two stages) after it entered.
`timescale 1ns/1ps
`default_nettype none

module mesh4x4 (
    input  wire           clk,
    input  wire           rst,
    input  wire           vld,
    input  wire [63:0]    a_col,
    input  wire [63:0]    b_row,
    input  wire           load,
    input  wire [511:0]   c_flat,
    output wire [511:0]   acc_flat,
    output wire [15:0]    acc_vld_flat
);
    // STUDENT: the skew goes here: row i of A and column j of B delayed by i and j cycles
    // (valid bits too). As given, every edge is fed directly.
    wire [15:0] a_edge [0:3];
    wire        av_edge[0:3];
    wire [15:0] b_edge [0:3];
    wire        bv_edge[0:3];
    genvar e;
    generate
        for (e = 0; e < 4; e = e + 1) begin : edge_in
            assign a_edge[e] = a_col[16 * e +: 16]; assign av_edge[e] = vld;
            assign b_edge[e] = b_row[16 * e +: 16]; assign bv_edge[e] = vld;
        end
    endgenerate

    // Links between PEs: ah[i][j] is the A entering PE (i, j) from the left (j = 4: leaving
    // the row), bv[i][j] the B entering PE (i, j) from above (i = 4: leaving the column).
    wire [15:0] ah  [0:3][0:4];
    wire        ahv [0:3][0:4];
    wire [15:0] bw  [0:4][0:3];
    wire        bwv [0:4][0:3];

    genvar i, j;
    generate
        for (i = 0; i < 4; i = i + 1) begin : row
            assign ah[i][0]  = a_edge[i];
            assign ahv[i][0] = av_edge[i];
            assign bw[0][i]  = b_edge[i];
            assign bwv[0][i] = bv_edge[i];
            for (j = 0; j < 4; j = j + 1) begin : col
                pe u_pe (
                    .clk(clk), .rst(rst),
                    .a_in(ah[i][j]), .a_vld_in(ahv[i][j]),
                    .b_in(bw[i][j]), .b_vld_in(bwv[i][j]),
                    .load(load), .c_in(c_flat[32 * (4 * i + j) +: 32]),
                    .a_out(ah[i][j + 1]), .a_vld_out(ahv[i][j + 1]),
                    .b_out(bw[i + 1][j]), .b_vld_out(bwv[i + 1][j]),
                    .acc(acc_flat[32 * (4 * i + j) +: 32]),
                    .acc_vld(acc_vld_flat[4 * i + j])
                );
            end
        end
    endgenerate
endmodule

`default_nettype wire
