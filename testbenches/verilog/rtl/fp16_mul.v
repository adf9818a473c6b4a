// fp16_mul: the exact product of two IEEE binary16 (FP16) operands, as fields for the adder.
//
// Integer datapath only. Each operand is unpacked to an 11-bit significand (hidden bit set for
// normals, clear for subnormals) and an exponent e such that value = sig * 2^(e - 25)
// (e = 1 for subnormals). The 22-bit product significand is exact: no rounding happens here.
//
//   p_nan  : NaN operand, or Inf x 0
//   p_inf  : Inf x (finite nonzero or Inf), not NaN
//   p_sign : sign of the product (a_sign xor b_sign), also for zero products
//   p_sig  : 22-bit product significand (0 for a zero product)
//   p_exp  : signed exponent with value = p_sig * 2^p_exp (range -48 .. 10)
`timescale 1ns/1ps
`default_nettype none

module fp16_mul (
    input  wire [15:0]       a,
    input  wire [15:0]       b,
    output wire              p_nan,
    output wire              p_inf,
    output wire              p_sign,
    output wire [21:0]       p_sig,
    output wire signed [9:0] p_exp
);
    wire [4:0] ea = a[14:10];
    wire [4:0] eb = b[14:10];
    wire [9:0] fa = a[9:0];
    wire [9:0] fb = b[9:0];

    wire a_max  = (ea == 5'd31);
    wire b_max  = (eb == 5'd31);
    wire a_nan  = a_max && (fa != 10'd0);
    wire b_nan  = b_max && (fb != 10'd0);
    wire a_inf  = a_max && (fa == 10'd0);
    wire b_inf  = b_max && (fb == 10'd0);
    wire a_zero = (ea == 5'd0) && (fa == 10'd0);
    wire b_zero = (eb == 5'd0) && (fb == 10'd0);

    // Significands with the hidden bit, and exponents (subnormals use exponent field 1).
    wire [10:0] sa = {ea != 5'd0, fa};
    wire [10:0] sb = {eb != 5'd0, fb};
    wire signed [9:0] xa = (ea == 5'd0) ? 10'sd1 : $signed({5'd0, ea});
    wire signed [9:0] xb = (eb == 5'd0) ? 10'sd1 : $signed({5'd0, eb});

    assign p_nan  = a_nan || b_nan || (a_inf && b_zero) || (a_zero && b_inf);
    assign p_inf  = !p_nan && (a_inf || b_inf);
    assign p_sign = a[15] ^ b[15];
    assign p_sig  = sa * sb;
    // value = sa * 2^(xa - 25) * sb * 2^(xb - 25)
    assign p_exp  = xa + xb - 10'sd50;
endmodule

`default_nettype wire
