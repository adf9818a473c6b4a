// fp32_add: acc + product, rounded once to IEEE binary32 with round-to-nearest-even.
//
// Integer datapath only: both operands become (sign, normalised 24-bit significand, exponent),
// the larger magnitude stays, the smaller is shifted right onto a grid 27 bits finer than the
// larger one's last place (bits shifted out are ORed into the lowest bit, the sticky bit), the
// two are added or subtracted, and the exact result is normalised and rounded to 24 bits or,
// below the normal range, to the subnormal grid 2^-149. Specials: any NaN, Inf - Inf and
// Inf x 0 give the canonical quiet NaN 0x7FC00000; Inf wins over finite values; an exact zero
// sum is +0 unless both addends are -0; overflow rounds to Inf.
`timescale 1ns/1ps
`default_nettype none

module fp32_add (
    input  wire [31:0]       acc,     // FP32 accumulator
    input  wire              p_nan,   // product fields from fp16_mul
    input  wire              p_inf,
    input  wire              p_sign,
    input  wire [21:0]       p_sig,
    input  wire signed [9:0] p_exp,
    output reg  [31:0]       sum
);
    // Position of the most significant one of a 52-bit word (0 when the word is 0).
    function [5:0] msb52;
        input [51:0] x;
        integer i;
        begin
            msb52 = 6'd0;
            for (i = 0; i < 52; i = i + 1)
                if (x[i]) msb52 = i[5:0];
        end
    endfunction

    // Leading zeros of a 24-bit significand (24 when it is 0).
    function [4:0] lzc24;
        input [23:0] x;
        integer i;
        reg found;
        begin
            lzc24 = 5'd24;
            found = 1'b0;
            for (i = 23; i >= 0; i = i - 1)
                if (x[i] && !found) begin
                    lzc24 = 5'd23 - i[4:0];
                    found = 1'b1;
                end
        end
    endfunction

    // Accumulator fields: value = c_sig * 2^c_exp.
    wire [7:0]  ec     = acc[30:23];
    wire [22:0] fc     = acc[22:0];
    wire        c_sign = acc[31];
    wire        c_nan  = (ec == 8'hFF) && (fc != 23'd0);
    wire        c_inf  = (ec == 8'hFF) && (fc == 23'd0);
    wire [23:0] c_sig  = {ec != 8'd0, fc};
    wire signed [12:0] c_exp = ((ec == 8'd0) ? 13'sd1 : $signed({5'd0, ec})) - 13'sd150;

    // Product widened to 24 bits: value = (p_sig << 2) * 2^(p_exp - 2).
    wire [23:0] q_sig = {p_sig, 2'b00};
    wire signed [12:0] q_exp = {{3{p_exp[9]}}, p_exp} - 13'sd2;

    // Normalise both (a zero gets an exponent far below every nonzero value).
    wire [4:0] lz_c = lzc24(c_sig);
    wire [4:0] lz_q = lzc24(q_sig);
    wire [23:0] nc_sig = c_sig << lz_c;
    wire [23:0] nq_sig = q_sig << lz_q;
    wire signed [12:0] nc_exp = (c_sig == 24'd0) ? -13'sd1000 : c_exp - $signed({8'd0, lz_c});
    wire signed [12:0] nq_exp = (q_sig == 24'd0) ? -13'sd1000 : q_exp - $signed({8'd0, lz_q});

    // The larger magnitude is the big operand.
    wire c_big = (nc_exp > nq_exp) || ((nc_exp == nq_exp) && (nc_sig >= nq_sig));
    wire [23:0] mb = c_big ? nc_sig : nq_sig;
    wire [23:0] ms = c_big ? nq_sig : nc_sig;
    wire signed [12:0] eb_ = c_big ? nc_exp : nq_exp;
    wire signed [12:0] es_ = c_big ? nq_exp : nc_exp;
    wire        sb_ = c_big ? c_sign : p_sign;
    wire        subtract = c_sign ^ p_sign;
    wire [12:0] align = eb_ - es_;   // alignment shift of the smaller operand, >= 0

    reg [50:0] small_full, small_al, lost;
    reg [51:0] r;
    reg [5:0]  p;
    reg signed [12:0] shift, shift_sub;
    // Lint waiver (UNUSEDSIGNAL): q holds the rounded-down significand and only its low 25
    // bits are read: the shift leaves at most 24 significant bits (the 25th is the carry of
    // rounding), so the bits above are zero by construction.
    /* verilator lint_off UNUSEDSIGNAL */
    reg [63:0] q;
    /* verilator lint_on UNUSEDSIGNAL */
    reg [63:0] rem, half, r64;
    reg [24:0] q2;
    reg signed [12:0] e_out;
    reg        up;

    always @* begin
        // Every variable gets a value on every path (no latches): defaults first.
        rem = 64'd0;
        half = 64'd0;
        sum = 32'd0;
        small_full = {ms, 27'd0};
        if (align >= 13'd51) begin
            small_al = 51'd0;
            lost = small_full;
        end else begin
            small_al = small_full >> align;
            lost = small_full << (7'd51 - align[6:0]);
        end
        small_al[0] = small_al[0] | (lost != 51'd0);
        r = subtract ? ({1'b0, mb, 27'd0} - {1'b0, small_al})
                     : ({1'b0, mb, 27'd0} + {1'b0, small_al});
        p = msb52(r);
        // value = r * 2^(eb_ - 27); keep 24 bits from the leading one, or the 2^-149 grid.
        shift = $signed({7'd0, p}) - 13'sd23;
        shift_sub = -13'sd122 - eb_;
        if (shift_sub > shift) shift = shift_sub;
        r64 = {12'd0, r};
        if (shift <= 0) begin
            q = r64 << (-shift);
            up = 1'b0;
        end else begin
            q = r64 >> shift;
            rem = r64 & ((64'd1 << shift) - 64'd1);
            half = 64'd1 << (shift - 1);
            up = (rem > half) || ((rem == half) && q[0]);
        end
        q2 = q[24:0] + {24'd0, up};
        e_out = shift + eb_ + 13'sd123;
        if (q2[24]) begin
            q2 = q2 >> 1;
            e_out = e_out + 13'sd1;
        end

        if (c_nan || p_nan || (c_inf && p_inf && subtract))
            sum = 32'h7FC0_0000;
        else if (c_inf)
            sum = {c_sign, 8'hFF, 23'd0};
        else if (p_inf)
            sum = {p_sign, 8'hFF, 23'd0};
        else if (c_sig == 24'd0 && q_sig == 24'd0)
            sum = {c_sign & p_sign, 31'd0};
        else if (r == 52'd0)
            sum = 32'd0;   // exact cancellation: +0
        else if (!q2[23])
            sum = {sb_, 8'd0, q2[22:0]};
        else if (e_out >= 13'sd255)
            sum = {sb_, 8'hFF, 23'd0};
        else
            sum = {sb_, e_out[7:0], q2[22:0]};
    end
endmodule

`default_nettype wire
