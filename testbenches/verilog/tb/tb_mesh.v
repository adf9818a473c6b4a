// tb_mesh: runs a GEMM D = A x B + C tile by tile on mesh4x4 and compares every element of D
// with the model's golden image, bit for bit.
//
// Inputs (plusargs): +DIR=<folder with a.hex b.hex c.hex d.hex> as written by
// `tcrtl gemm --memh DIR` (FP16 A and B, FP32 C and D, row-major; the `//` header lines are
// skipped by $readmemh). The shape M, N, K comes from the second header line of d.hex
// ("// shape M N K = 5 7 9; formats fp16 x fp16; mode ieee; ..."); +M, +N, +K are optional
// and, when given, must equal it (a mismatch is refused with an ERROR line). Images of another
// format, mode, width or accumulator are refused too.
// Optional +SHOW=<n>: how many mismatches to print (default 8). Optional +OUT=<folder>: also
// write the design's D there as d.hex ($writememh), for `tcrtl grade --golden DIR --student
// OUT`, and OUT/sampling.txt (how the steps were sampled). With +OUT, +STEPS also writes
// OUT/steps.hex: every PE's accumulator after each step of its element (one line per row,
// column, step of D, the order of the golden steps.hex).
//
// Reset and sampling convention (docs/course/interfaces.md): rst is high for the first two
// clock edges; inputs change on the falling edge and are taken by the rising edge. A step's
// accumulator is sampled on the falling edge of each cycle in which the PE's acc_vld is high
// (the n-th acc_vld of a tile is step n). +LAT=<n> samples by latency instead: n clock edges
// from the edge at which the PE takes the step's operands to the edge after which acc shows
// the sum, counting both (2 for the reference PE, 1 for a single-cycle MAC); the same number
// `tcrtl grade --vcd` reports as the accumulator's lag.
// Output: one MISMATCH line per shown mismatch, then the summary line
//   RESULT <passed> passed, <failed> failed
// Tiles are 4 x 4 blocks of D; rows and columns past M or N are fed zeros and not compared.
`timescale 1ns/1ps
`default_nettype none

module tb_mesh;
    localparam integer MAXW = 1 << 16;   // words per image
    localparam integer MAXS = 1 << 18;   // step records
    localparam integer DRAIN = 10;       // edges after the last step before D is read (+LAT)
    localparam integer DRAIN_MAX = 64;   // edges waited for every acc_vld (acc_vld sampling)

    reg [15:0] amem [0:MAXW-1];
    reg [15:0] bmem [0:MAXW-1];
    reg [31:0] cmem [0:MAXW-1];
    reg [31:0] dmem [0:MAXW-1];
    reg [31:0] dout [0:MAXW-1];   // the design's D, for +OUT
    reg [31:0] smem [0:MAXS-1];   // the accumulator after each step, for +STEPS

    reg          clk = 1'b0;
    reg          rst = 1'b1;
    reg          vld = 1'b0;
    reg          load = 1'b0;
    reg  [63:0]  a_col = 64'd0;
    reg  [63:0]  b_row = 64'd0;
    reg  [511:0] c_flat = 512'd0;
    wire [511:0] acc_flat;
    wire [15:0]  acc_vld_flat;

    mesh4x4 dut (
        .clk(clk), .rst(rst), .vld(vld), .a_col(a_col), .b_row(b_row),
        .load(load), .c_flat(c_flat), .acc_flat(acc_flat), .acc_vld_flat(acc_vld_flat)
    );

    // The golden images, the plusargs, the comparison and the result folder (shared with
    // the other GEMM testbenches).
`include "tb/golden_io.vh"

    // The clock, the step sampling, the C preload and the drain and check (shared with the
    // other mesh testbench).
`include "tb/mesh_steps.vh"

    integer ti, tj, i, j, t;
    reg [1023:0] vcd_file;
    reg ok;

    initial begin
        read_problem("tb_mesh", "tcrtl gemm --memh", ok);
        if (!ok) $finish;
        tile_steps = k;
        latency_option(ok);
        if (!ok) $finish;
        // +VCD=<file>: dump every signal (for `tcrtl grade --vcd`).
        if ($value$plusargs("VCD=%s", vcd_file)) begin
            $dumpfile(vcd_file);
            $dumpvars(0, tb_mesh);
        end
        steps_option(m * n * k);
        $readmemh({dir, "/a.hex"}, amem, 0, m * k - 1);
        $readmemh({dir, "/b.hex"}, bmem, 0, k * n - 1);

        @(negedge clk);
        @(negedge clk);
        rst = 1'b0;
        for (ti = 0; ti < m; ti = ti + 4) begin
            for (tj = 0; tj < n; tj = tj + 4) begin
                start_tile(ti, tj);
                // K steps: column t of the A tile, row t of the B tile.
                for (t = 0; t < k; t = t + 1) begin
                    for (i = 0; i < 4; i = i + 1)
                        a_col[16 * i +: 16] = (ti + i < m) ? amem[(ti + i) * k + t] : 16'd0;
                    for (j = 0; j < 4; j = j + 1)
                        b_row[16 * j +: 16] = (tj + j < n) ? bmem[t * n + tj + j] : 16'd0;
                    vld = 1'b1;
                    @(negedge clk);
                end
                vld = 1'b0;
                a_col = 64'd0;
                b_row = 64'd0;
                finish_tile(ti, tj);
            end
        end
        finish_run(m * n * k, by_lat, by_lat ? lat : first_lat);
    end
endmodule

`default_nettype wire
