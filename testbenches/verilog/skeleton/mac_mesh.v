// mac_mesh (student skeleton, lab 0): the 4 x 4 mesh of mac_pe cells. The ports are given;
// only cell (0, 0) is placed, on the edges. As given it compiles and runs, and every other
// cell shows 0.
//
// What to build (docs/course/lab0.md, "Student task"): 16 cells mac_pe, cell (r, c) taking A
// from its left neighbour's a (row r's edge a_edge[16 r +: 16] for c = 0) and B from its upper
// neighbour's b (column c's edge b_edge[16 c +: 16] for r = 0); a_flat, b_flat and acc_flat
// show every cell's a, b and acc at index 4 r + c. Port interface: docs/course/interfaces.md.
`timescale 1ns/1ps
`default_nettype none

module mac_mesh (
    input  wire         clk,
    input  wire         rst,
    // Lint waiver (UNUSEDSIGNAL): the other edge lanes are the student's to connect.
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [63:0]  a_edge,
    input  wire [63:0]  b_edge,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [255:0] a_flat,
    output wire [255:0] b_flat,
    output wire [511:0] acc_flat
);
    // STUDENT: place the other 15 cells and their links.
    mac_pe u_pe_0_0 (
        .clk(clk), .rst(rst), .a_in(a_edge[15:0]), .b_in(b_edge[15:0]),
        .a(a_flat[15:0]), .b(b_flat[15:0]), .acc(acc_flat[31:0])
    );
    assign a_flat[255:16]  = 240'd0;
    assign b_flat[255:16]  = 240'd0;
    assign acc_flat[511:32] = 480'd0;
endmodule

`default_nettype wire
