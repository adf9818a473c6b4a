// pe (student skeleton): one output-stationary processing element, FP16 x FP16 + FP32,
// IEEE mode. The ports, the operand pass-through and the accumulator register are given; the
// datapath is left out. As given it compiles and runs, and every D element fails the
// comparison (the accumulator only ever holds C).
//
// What to build (see README.md in this folder):
//   acc <- RNE32(acc + a * b) once per cycle in which a_vld_in and b_vld_in are both high,
//   with the exact FP16 x FP16 product (it always fits FP32), one round-to-nearest-even of the
//   sum, FP32 subnormals kept (no flush to zero), canonical NaN 0x7FC00000 for any NaN,
//   Inf x 0 or Inf - Inf, and +0 for an exact zero sum unless both addends are -0.
// acc_vld: high in each cycle in which acc shows the sum of a step just taken (one cycle per
// valid pair); the testbench samples the accumulator in those cycles.
// Any pipeline depth is fine as long as the steps are added in arrival order and acc_vld
// follows the sums (the testbench reads D once every PE has raised it K times).
`timescale 1ns/1ps
`default_nettype none

module pe (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] a_in,
    input  wire        a_vld_in,
    input  wire [15:0] b_in,
    input  wire        b_vld_in,
    input  wire        load,
    input  wire [31:0] c_in,
    output reg  [15:0] a_out,
    output reg         a_vld_out,
    output reg  [15:0] b_out,
    output reg         b_vld_out,
    output reg  [31:0] acc,
    output reg         acc_vld
);
    // STUDENT: the datapath goes here. Unpack a_in and b_in (sign, exponent, significand with
    // the hidden bit; subnormals; NaN and Inf), form the exact product, add it to acc with
    // one rounding, and drive `sum` with the rounded FP32 result. Split it into stages if you
    // like (add registers and delay `step` and acc_vld with them).
    wire        step = a_vld_in && b_vld_in;
    wire [31:0] sum  = acc;

    always @(posedge clk) begin
        if (rst) begin
            a_out <= 16'd0;  a_vld_out <= 1'b0;
            b_out <= 16'd0;  b_vld_out <= 1'b0;
            acc   <= 32'd0;  acc_vld <= 1'b0;
        end else begin
            a_out <= a_in;  a_vld_out <= a_vld_in;
            b_out <= b_in;  b_vld_out <= b_vld_in;
            if (load)
                acc <= c_in;
            else if (step)
                acc <= sum;
            acc_vld <= step && !load;
        end
    end
endmodule

`default_nettype wire
