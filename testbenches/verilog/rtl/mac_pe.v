// mac_pe: lab 0's integer multiply-accumulate cell (the reference solution).
//
// Registers its left input a_in into a and its upper input b_in into b (A moves right, B
// moves down one cell per clock) and adds the product of the inputs to its 32-bit
// accumulator, wrapping mod 2^32: acc <- acc + a_in * b_in. rst (synchronous) clears every
// register. Port interface: docs/course/interfaces.md.
`timescale 1ns/1ps
`default_nettype none

module mac_pe (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] a_in,
    input  wire [15:0] b_in,
    output reg  [15:0] a,
    output reg  [15:0] b,
    output reg  [31:0] acc
);
    wire [31:0] prod = {16'd0, a_in} * {16'd0, b_in};   // 16 x 16 bits: exact in 32
    always @(posedge clk) begin
        if (rst) begin
            a <= 16'd0;  b <= 16'd0;  acc <= 32'd0;
        end else begin
            a <= a_in;  b <= b_in;  acc <= acc + prod;
        end
    end
endmodule

`default_nettype wire
