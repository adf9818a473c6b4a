// mac_mesh: lab 0's 4 x 4 integer multiply-accumulate mesh (the reference solution).
//
// 16 cells mac_pe (rtl/mac_pe.v), A moving right and B down one cell per clock. Row r's left edge is
// a_edge[16 r +: 16], column c's top edge b_edge[16 c +: 16] (no skew). a_flat, b_flat and
// acc_flat show every cell's registers, cell (r, c) at index 4 r + c (16 or 32 bits each).
// rst (synchronous) clears every register. Port interface: docs/course/interfaces.md.
`timescale 1ns/1ps
`default_nettype none

module mac_mesh (
    input  wire         clk,
    input  wire         rst,
    input  wire [63:0]  a_edge,
    input  wire [63:0]  b_edge,
    output wire [255:0] a_flat,
    output wire [255:0] b_flat,
    output wire [511:0] acc_flat
);
    genvar r, c;
    generate
        for (r = 0; r < 4; r = r + 1) begin : row
            for (c = 0; c < 4; c = c + 1) begin : col
                // A from the left neighbour (or the edge), B from the upper one (or the edge).
                wire [15:0] a_in;
                wire [15:0] b_in;
                if (c == 0) begin : a_from_edge
                    assign a_in = a_edge[16 * r +: 16];
                end else begin : a_from_left
                    assign a_in = a_flat[16 * (4 * r + c - 1) +: 16];
                end
                if (r == 0) begin : b_from_edge
                    assign b_in = b_edge[16 * c +: 16];
                end else begin : b_from_above
                    assign b_in = b_flat[16 * (4 * (r - 1) + c) +: 16];
                end
                mac_pe u_pe (
                    .clk(clk), .rst(rst), .a_in(a_in), .b_in(b_in),
                    .a(a_flat[16 * (4 * r + c) +: 16]),
                    .b(b_flat[16 * (4 * r + c) +: 16]),
                    .acc(acc_flat[32 * (4 * r + c) +: 32])
                );
            end
        end
    endgenerate
endmodule

`default_nettype wire
