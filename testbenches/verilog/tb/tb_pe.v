// tb_pe: runs a GEMM D = A x B + C on ONE pe, element by element, and compares D and every
// intermediate accumulator with the model's golden images (lab 1: a PE alone, no mesh).
//
// Inputs (plusargs) as tb_mesh.v: +DIR=<golden folder of `tcrtl gemm --memh` or `tcrtl course
// directed`> (shape from d.hex's header; +M +N +K optional, and must match), +SHOW=<n>,
// +OUT=<folder> (d.hex, and with +STEPS steps.hex in the golden order, and sampling.txt), so
// `tcrtl grade --golden DIR --student OUT` grades the result.
//
// Reset and sampling convention (docs/course/interfaces.md): rst is high for the first two
// clock edges; inputs change on the falling edge and are taken by the rising edge. For each
// element (r, c): one cycle with load high and c_in = C[r][c], then K cycles with a_in =
// A[r][s], b_in = B[s][c] and both valid bits high, then idle cycles until the PE has raised
// acc_vld K times (at most 64; a TIMEOUT line otherwise). The accumulator is sampled on the
// falling edge of each cycle with acc_vld high (the n-th is step n); D[r][c] is acc after that.
// Output: MISMATCH lines, then RESULT <passed> passed, <failed> failed.
`timescale 1ns/1ps
`default_nettype none

module tb_pe;
    localparam integer MAXW = 1 << 16;   // words per image
    localparam integer MAXS = 1 << 18;   // step records
    localparam integer DRAIN_MAX = 64;   // cycles waited for the last acc_vld

    reg [15:0] amem [0:MAXW-1];
    reg [15:0] bmem [0:MAXW-1];
    reg [31:0] cmem [0:MAXW-1];
    reg [31:0] dmem [0:MAXW-1];
    reg [31:0] dout [0:MAXW-1];
    reg [31:0] smem [0:MAXS-1];

    reg         clk = 1'b0;
    reg         rst = 1'b1;
    reg  [15:0] a_in = 16'd0;
    reg  [15:0] b_in = 16'd0;
    reg         vld = 1'b0;
    reg         load = 1'b0;
    reg  [31:0] c_in = 32'd0;
    // Lint waiver (UNUSEDSIGNAL): a PE alone has no neighbours: its pass-through outputs are
    // connected (the port interface) but not read.
    /* verilator lint_off UNUSEDSIGNAL */
    wire [15:0] a_out, b_out;
    wire        a_vld_out, b_vld_out;
    /* verilator lint_on UNUSEDSIGNAL */
    wire [31:0] acc;
    wire        acc_vld;

    pe dut (
        .clk(clk), .rst(rst), .a_in(a_in), .a_vld_in(vld), .b_in(b_in), .b_vld_in(vld),
        .load(load), .c_in(c_in), .a_out(a_out), .a_vld_out(a_vld_out), .b_out(b_out),
        .b_vld_out(b_vld_out), .acc(acc), .acc_vld(acc_vld)
    );

    // The golden images, the plusargs, the comparison and the result folder (shared with
    // tb_mesh.v and tb_mesh_sparse.v).
`include "tb/golden_io.vh"

    // Lint waiver (BLKSEQ): the clock generator and the sampling process are testbench code,
    // not hardware: they assign with '=' on purpose (no register is inferred).
    /* verilator lint_off BLKSEQ */
    always #5 clk = ~clk;

    integer seen = 0;            // acc_vld cycles of the current element
    integer elem = -1;           // the current element, row-major

    always @(negedge clk) begin
        if (acc_vld && elem >= 0) begin
            if (steps_on && seen < k)
                smem[elem * k + seen] = acc;
            seen = seen + 1;
        end
    end
    /* verilator lint_on BLKSEQ */

    integer r, c, s, waited;
    reg ok;

    initial begin
        read_problem("tb_pe", "tcrtl gemm --memh", ok);
        if (!ok) $finish;
        steps_option(m * n * k);
        $readmemh({dir, "/a.hex"}, amem, 0, m * k - 1);
        $readmemh({dir, "/b.hex"}, bmem, 0, k * n - 1);
        @(negedge clk);
        @(negedge clk);
        rst = 1'b0;
        for (r = 0; r < m; r = r + 1)
            for (c = 0; c < n; c = c + 1) begin
                c_in = cmem[r * n + c];
                load = 1'b1;
                @(negedge clk);
                load = 1'b0;
                elem = r * n + c;
                seen = 0;
                for (s = 0; s < k; s = s + 1) begin
                    a_in = amem[r * k + s];
                    b_in = bmem[s * n + c];
                    vld = 1'b1;
                    @(negedge clk);
                end
                vld = 1'b0;
                a_in = 16'd0;
                b_in = 16'd0;
                waited = 0;
                while (seen < k && waited < DRAIN_MAX) begin
                    @(negedge clk);
                    waited = waited + 1;
                end
                if (seen < k)
                    $display("TIMEOUT: d[%0d][%0d]: acc_vld rose %0d of %0d times", r, c, seen, k);
                check_element(r, c, acc);
            end
        finish_run(m * n * k, 1'b0, 0);
    end
endmodule

`default_nettype wire
