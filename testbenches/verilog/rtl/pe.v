// pe: one output-stationary processing element, FP16 x FP16 + FP32, IEEE mode (w = 1).
//
// Two pipeline stages, like the model's PE: stage 1 registers the exact product of the
// operands that arrive this cycle (fp16_mul), stage 2 adds it to the FP32 accumulator with one
// RNE rounding (fp32_add), so acc <- RNE32(acc + a * b) once per valid pair, in arrival order.
// A and its valid bit leave to the right, B and its valid bit downwards, one cycle later.
// load copies c_in into the accumulator (the preload of C), before the first valid pair.
// acc_vld is high in each cycle in which acc shows the sum of a step it has just taken (one
// cycle per valid pair, two clock edges after the edge that took the pair: the PE's latency
// is 2). Port interface: docs/course/interfaces.md.
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
    // Stage 1: the product of this cycle's operands.
    wire              m_nan, m_inf, m_sign;
    wire [21:0]       m_sig;
    wire signed [9:0] m_exp;
    fp16_mul u_mul (
        .a(a_in), .b(b_in),
        .p_nan(m_nan), .p_inf(m_inf), .p_sign(m_sign), .p_sig(m_sig), .p_exp(m_exp)
    );

    reg               s1_vld, s1_nan, s1_inf, s1_sign;
    reg [21:0]        s1_sig;
    reg signed [9:0]  s1_exp;

    // Stage 2: accumulator + registered product.
    wire [31:0] sum;
    fp32_add u_add (
        .acc(acc), .p_nan(s1_nan), .p_inf(s1_inf), .p_sign(s1_sign),
        .p_sig(s1_sig), .p_exp(s1_exp), .sum(sum)
    );

    always @(posedge clk) begin
        if (rst) begin
            a_out <= 16'd0;  a_vld_out <= 1'b0;
            b_out <= 16'd0;  b_vld_out <= 1'b0;
            s1_vld <= 1'b0;  s1_nan <= 1'b0;  s1_inf <= 1'b0;  s1_sign <= 1'b0;
            s1_sig <= 22'd0; s1_exp <= 10'sd0;
            acc <= 32'd0;    acc_vld <= 1'b0;
        end else begin
            a_out <= a_in;  a_vld_out <= a_vld_in;
            b_out <= b_in;  b_vld_out <= b_vld_in;
            s1_vld  <= a_vld_in && b_vld_in;
            s1_nan  <= m_nan;
            s1_inf  <= m_inf;
            s1_sign <= m_sign;
            s1_sig  <= m_sig;
            s1_exp  <= m_exp;
            if (load)
                acc <= c_in;
            else if (s1_vld)
                acc <= sum;
            acc_vld <= s1_vld && !load;
        end
    end
endmodule

`default_nettype wire
