// mesh4x4: a 4 x 4 output-stationary mesh of pe with its input skew.
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
    // Skew: a delay line of i registers for row i of A (and j for column j of B).
    reg  [15:0] a_dly [0:5];   // row 1: [0]; row 2: [1..2]; row 3: [3..5]
    reg         av_dly[0:5];
    reg  [15:0] b_dly [0:5];
    reg         bv_dly[0:5];
    integer s;
    always @(posedge clk) begin
        if (rst) begin
            for (s = 0; s < 6; s = s + 1) begin
                a_dly[s] <= 16'd0; av_dly[s] <= 1'b0;
                b_dly[s] <= 16'd0; bv_dly[s] <= 1'b0;
            end
        end else begin
            a_dly[0] <= a_col[16 +: 16];  av_dly[0] <= vld;
            a_dly[1] <= a_col[32 +: 16];  av_dly[1] <= vld;
            a_dly[2] <= a_dly[1];         av_dly[2] <= av_dly[1];
            a_dly[3] <= a_col[48 +: 16];  av_dly[3] <= vld;
            a_dly[4] <= a_dly[3];         av_dly[4] <= av_dly[3];
            a_dly[5] <= a_dly[4];         av_dly[5] <= av_dly[4];
            b_dly[0] <= b_row[16 +: 16];  bv_dly[0] <= vld;
            b_dly[1] <= b_row[32 +: 16];  bv_dly[1] <= vld;
            b_dly[2] <= b_dly[1];         bv_dly[2] <= bv_dly[1];
            b_dly[3] <= b_row[48 +: 16];  bv_dly[3] <= vld;
            b_dly[4] <= b_dly[3];         bv_dly[4] <= bv_dly[3];
            b_dly[5] <= b_dly[4];         bv_dly[5] <= bv_dly[4];
        end
    end

    // Skewed edge inputs: index 0..3 is row (for A) or column (for B).
    wire [15:0] a_edge [0:3];
    wire        av_edge[0:3];
    wire [15:0] b_edge [0:3];
    wire        bv_edge[0:3];
    assign a_edge[0] = a_col[0 +: 16]; assign av_edge[0] = vld;
    assign a_edge[1] = a_dly[0];       assign av_edge[1] = av_dly[0];
    assign a_edge[2] = a_dly[2];       assign av_edge[2] = av_dly[2];
    assign a_edge[3] = a_dly[5];       assign av_edge[3] = av_dly[5];
    assign b_edge[0] = b_row[0 +: 16]; assign bv_edge[0] = vld;
    assign b_edge[1] = b_dly[0];       assign bv_edge[1] = bv_dly[0];
    assign b_edge[2] = b_dly[2];       assign bv_edge[2] = bv_dly[2];
    assign b_edge[3] = b_dly[5];       assign bv_edge[3] = bv_dly[5];

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
