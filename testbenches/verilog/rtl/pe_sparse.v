// pe_sparse: one output-stationary processing element in 2:4 sparse mode, FP16 x FP16 + FP32,
// IEEE mode (w = 1: one kept A value a step). The dense pe (pe.v) with two additions:
//
// - meta_in/meta_out: the 2-bit index (0..3, within its group of four dense K positions) of
//   the kept A value on a_in, registered beside A, so it moves right one PE per cycle with the
//   value it belongs to. For the group's first kept value it is bits [1:0] of the group's
//   metadata nibble, for the second bits [3:2] (docs/sparsity.md).
// - b_in/b_out: four B lanes, the B values of the group's four dense K positions (lane l in
//   bits [16 l +: 16]), moving down one PE per cycle. A 4:1 multiplexer steered by meta_in
//   picks b_sel = lane meta_in for the multiplier; the other three lanes (the positions the
//   compression dropped) take no part in the step.
//
// The rest is pe.v: stage 1 registers the exact product of a_in and b_sel (fp16_mul), stage 2
// adds it to the FP32 accumulator with one RNE rounding (fp32_add); load preloads c_in; acc_vld
// is high in each cycle in which acc shows the sum of a step just taken (latency 2). Port
// interface: docs/course/interfaces.md.
`timescale 1ns/1ps
`default_nettype none

module pe_sparse (
    input  wire        clk,
    input  wire        rst,
    input  wire [15:0] a_in,
    input  wire        a_vld_in,
    input  wire [1:0]  meta_in,
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
    // The B multiplexer: the lane the kept A value's index names.
    reg [15:0] b_sel;
    always @(*) begin
        case (meta_in)
            2'd0:    b_sel = b_in[15:0];
            2'd1:    b_sel = b_in[31:16];
            2'd2:    b_sel = b_in[47:32];
            default: b_sel = b_in[63:48];
        endcase
    end

    // Stage 1: the product of this cycle's kept A value and the selected B value.
    wire              m_nan, m_inf, m_sign;
    wire [21:0]       m_sig;
    wire signed [9:0] m_exp;
    fp16_mul u_mul (
        .a(a_in), .b(b_sel),
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
            a_out <= 16'd0;  a_vld_out <= 1'b0;  meta_out <= 2'd0;
            b_out <= 64'd0;  b_vld_out <= 1'b0;
            s1_vld <= 1'b0;  s1_nan <= 1'b0;  s1_inf <= 1'b0;  s1_sign <= 1'b0;
            s1_sig <= 22'd0; s1_exp <= 10'sd0;
            acc <= 32'd0;    acc_vld <= 1'b0;
        end else begin
            a_out <= a_in;  a_vld_out <= a_vld_in;  meta_out <= meta_in;
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
