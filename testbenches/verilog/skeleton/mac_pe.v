// mac_pe (student skeleton, lab 0): one integer multiply-accumulate cell. The ports are
// given; the registers are left at their reset values. As given it compiles and runs, and
// every accumulator stays 0, so the grader fails it from cycle 3 on.
//
// What to build (docs/course/lab0.md, "Student task"): on every clock edge after reset,
// a <- a_in, b <- b_in and acc <- acc + a_in * b_in (32 bits, wrapping mod 2^32); rst
// (synchronous, active high) clears all three. Port interface: docs/course/interfaces.md.
`timescale 1ns/1ps
`default_nettype none

module mac_pe (
    input  wire        clk,
    input  wire        rst,
    // Lint waiver (UNUSEDSIGNAL): the inputs are the student's to use.
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [15:0] a_in,
    input  wire [15:0] b_in,
    /* verilator lint_on UNUSEDSIGNAL */
    output reg  [15:0] a,
    output reg  [15:0] b,
    output reg  [31:0] acc
);
    // STUDENT: register a_in and b_in, and add their product to acc.
    always @(posedge clk) begin
        if (rst) begin
            a <= 16'd0;  b <= 16'd0;  acc <= 32'd0;
        end
    end
endmodule

`default_nettype wire
