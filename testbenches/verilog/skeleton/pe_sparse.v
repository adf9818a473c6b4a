// pe_sparse (student skeleton, lab 5): one output-stationary processing element in 2:4 sparse
// mode, FP16 x FP16 + FP32, IEEE mode, one kept A value a step. The ports, the A and B
// pass-through registers, the load of C and the accumulator register are given; the metadata
// register, the B multiplexer and the datapath are left out. As given it compiles and runs,
// and every D element fails the comparison (the accumulator only ever holds C).
//
// What to build (docs/course/lab5.md, the port interface in docs/course/interfaces.md):
// - meta_out: meta_in registered beside a_out, so the 2-bit index of a kept A value moves right
//   one PE per cycle together with that value (the mesh's metadata skew matches A's);
// - b_sel: a 4:1 multiplexer over the four B lanes of b_in (lane l in bits [16 l +: 16], the
//   group's four dense K positions), steered by meta_in: b_sel = lane meta_in;
// - the datapath of your lab 1 PE on a_in and b_sel: acc <- RNE32(acc + a_in * b_sel) once per
//   cycle in which a_vld_in and b_vld_in are both high (you may reuse your own multiplier and
//   adder, or rtl/fp16_mul.v and rtl/fp32_add.v), with acc_vld high in each cycle in which acc
//   shows a step's sum. Any pipeline depth is fine, as in lab 1.
// The B lanes the multiplexer does not pick (positions the compression dropped) must take no
// part in the step: an Inf or NaN there does not reach D.
`timescale 1ns/1ps
`default_nettype none

module pe_sparse (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] a_in,
    input  wire        a_vld_in,
    // Lint waiver (UNUSEDSIGNAL): the skeleton leaves the metadata register and the
    // multiplexer, the two readers of meta_in, to the student.
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [1:0]  meta_in,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [63:0] b_in,
    input  wire        b_vld_in,
    input  wire        load,
    input  wire [31:0] c_in,
    output reg  [15:0] a_out,
    output reg         a_vld_out,
    output reg  [1:0]  meta_out,
    output reg  [63:0] b_out,
    output reg         b_vld_out,
    output reg  [31:0] acc,
    output reg         acc_vld
);
    // STUDENT: the B multiplexer and the datapath go here (drive `sum` with the rounded FP32
    // result of acc + a_in * b_sel; add registers and delay `step` and acc_vld with them if you
    // pipeline it).
    wire        step = a_vld_in && b_vld_in;
    wire [31:0] sum  = acc;

    always @(posedge clk) begin
        if (rst) begin
            a_out <= 16'd0;  a_vld_out <= 1'b0;  meta_out <= 2'd0;
            b_out <= 64'd0;  b_vld_out <= 1'b0;
            acc   <= 32'd0;  acc_vld <= 1'b0;
        end else begin
            a_out <= a_in;  a_vld_out <= a_vld_in;
            meta_out <= 2'd0;  // STUDENT: register meta_in here, beside a_out
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
